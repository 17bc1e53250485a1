// Images end to end: real `llamux serve` processes on loopback with the tiny llama model and its tiny
// projector lying next to it as mmproj-*.gguf, the official `openai` and `ollama` clients, real JPEG,
// PNG and WebP files, and a loopback HTTP server for image URLs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { Ollama } from "ollama";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "../server/serve-fixture.ts";

const IMAGE_TOKENS = 16; // the tiny projector: 56x56 pixels in 14x14 patches
const fixture = (name: string) => join(import.meta.dir, "..", "fixtures", "images", name);
const read = async (name: string) => new Uint8Array(await Bun.file(fixture(name)).arrayBuffer());
const dataUri = (bytes: Uint8Array, type: string) => `data:${type};base64,${Buffer.from(bytes).toString("base64")}`;

let dir: string;
let jpeg: Uint8Array;
let png: Uint8Array;
let webp: Uint8Array;
let imageHost: ReturnType<typeof Bun.serve>;
let imageBase: string;
/** Profile a refuses private image URLs (the default); profile b allows them; profile c gets its projector by --mmproj. */
const servers: Partial<Record<"a" | "b" | "c", RunningServer>> = {};
const openai = (profile: "a" | "b" | "c") => new OpenAI({ baseURL: `${servers[profile]!.baseUrl}/v1`, apiKey: "placeholder", maxRetries: 0 });

beforeAll(async () => {
  jpeg = await read("python-16.jpg");
  png = await read("llama1-icon.png");
  webp = await read("python-16.webp");
  dir = mkdtempSync(join(tmpdir(), "llamux-vision-"));
  symlinkSync(await ensureModel("tiny-llama"), join(dir, "tiny-chat.gguf"));
  symlinkSync(await ensureModel("tiny-mmproj"), join(dir, "mmproj-tiny-chat.gguf"));
  imageHost = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === "/python.jpg") return new Response(jpeg, { headers: { "content-type": "image/jpeg" } });
      if (path === "/huge.jpg") return new Response(new Uint8Array(21_000_000).fill(0xff));
      if (path === "/to-loopback") return Response.redirect(`${imageBase}/python.jpg`, 302);
      return new Response("<html>not an image</html>", { headers: { "content-type": "text/html" } });
    },
  });
  imageBase = `http://127.0.0.1:${imageHost.port}`;
  const model = join(dir, "tiny-chat.gguf");
  const common = ["--served-model-name", "tiny-vision", "--ctx-size", "512", "--threads", "2", "--parallel", "2"];
  servers.a = await startServer([model, "--profile", "a", ...common]);
  servers.b = await startServer([model, "--profile", "b", ...common, "--allow-private-image-urls"]);
  servers.c = await startServer([await ensureModel("tiny-llama"), "--mmproj", await ensureModel("tiny-mmproj"), "--profile", "c", ...common]);
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(servers).map((s) => s.stop()));
  imageHost?.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

type Part = OpenAI.Chat.Completions.ChatCompletionContentPart;
const ask = (profile: "a" | "b" | "c", content: Part[] | string, maxTokens = 4) =>
  openai(profile).chat.completions.create({ model: "tiny-vision", messages: [{ role: "user", content }], max_tokens: maxTokens, temperature: 0 });
const image = (url: string): Part => ({ type: "image_url", image_url: { url } });
const text = (value: string): Part => ({ type: "text", text: value });

/** The status and message of a refused OpenAI request. */
async function refusal(promise: Promise<unknown>): Promise<{ status: number; message: string }> {
  const error = await promise.then(() => undefined, (e) => e);
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return { status: (error as InstanceType<typeof OpenAI.APIError>).status!, message: (error as Error).message };
}

describe("/v1/chat/completions with image_url parts", () => {
  test.each(["a", "b", "c"] as const)("profile %s: JPEG and PNG data URIs count their image tokens and generate", async (profile) => {
    const plain = await ask(profile, [text("What is in the picture?")]);
    const one = await ask(profile, [image(dataUri(jpeg, "image/jpeg")), text("What is in the picture?")]);
    const two = await ask(profile, [image(dataUri(jpeg, "image/jpeg")), image(dataUri(png, "image/png")), text("What is in the picture?")]);
    expect(one.choices[0]!.finish_reason).toBe("length");
    expect(one.usage!.completion_tokens).toBe(4);
    // The image's tokens, plus at most a couple of text tokens that separate it from the question.
    expect(one.usage!.prompt_tokens - plain.usage!.prompt_tokens).toBeGreaterThanOrEqual(IMAGE_TOKENS);
    expect(one.usage!.prompt_tokens - plain.usage!.prompt_tokens).toBeLessThanOrEqual(IMAGE_TOKENS + 2);
    expect(two.usage!.prompt_tokens - one.usage!.prompt_tokens).toBe(IMAGE_TOKENS);
  });

  test("a WebP image and a streamed answer", async () => {
    const stream = await openai("a").chat.completions.create({
      model: "tiny-vision", messages: [{ role: "user", content: [text("Describe"), image(dataUri(webp, "image/webp"))] }],
      max_tokens: 3, temperature: 0, stream: true, stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.at(-1)!.usage!.prompt_tokens).toBeGreaterThan(IMAGE_TOKENS);
    expect(chunks.at(-1)!.usage!.completion_tokens).toBe(3);
  });

  test("one image request and one text request at once both finish", async () => {
    const [withImage, textOnly] = await Promise.all([
      ask("a", [image(dataUri(png, "image/png")), text("Describe it")], 6),
      ask("a", "Tell me a story", 12),
    ]);
    expect(withImage.usage!.completion_tokens).toBe(6);
    expect(textOnly.usage!.completion_tokens).toBe(12);
  });

  test("an image URL on loopback is refused by default, saying why", async () => {
    const { status, message } = await refusal(ask("a", [image(`${imageBase}/python.jpg`), text("hi")]));
    expect(status).toBe(400);
    expect(message).toContain("loopback, private or link-local");
  });

  test("with --allow-private-image-urls the URL is fetched, also through a redirect", async () => {
    const direct = await ask("b", [image(`${imageBase}/python.jpg`), text("hi")]);
    const redirected = await ask("b", [image(`${imageBase}/to-loopback`), text("hi")]);
    expect(direct.usage!.prompt_tokens).toBeGreaterThan(IMAGE_TOKENS);
    expect(redirected.usage!.prompt_tokens).toBe(direct.usage!.prompt_tokens);
    expect(redirected.choices[0]!.message.content).toBe(direct.choices[0]!.message.content);
  });

  test("oversize, non-image and undecodable inputs are 400s", async () => {
    const huge = await refusal(ask("b", [image(`${imageBase}/huge.jpg`), text("hi")]));
    expect(huge).toMatchObject({ status: 400 });
    expect(huge.message).toContain("larger than 20000000 bytes");
    const html = await refusal(ask("b", [image(`${imageBase}/page.html`), text("hi")]));
    expect(html).toMatchObject({ status: 400 });
    expect(html.message).toContain("not a JPEG, PNG, GIF, BMP or WebP image");
    const badBase64 = await refusal(ask("a", [image("data:image/png;base64,@@@not-base64@@@"), text("hi")]));
    expect(badBase64).toMatchObject({ status: 400 });
    // PNG's signature on bytes that are not a PNG: only the decoder can tell.
    const corrupt = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...new Array(64).fill(7)]);
    const undecodable = await refusal(ask("a", [image(dataUri(corrupt, "image/png")), text("hi")]));
    expect(undecodable).toMatchObject({ status: 400 });
    expect(undecodable.message).toContain("Cannot use image 1");
    // The engine is still there.
    expect((await ask("a", [image(dataUri(jpeg, "image/jpeg")), text("hi")])).usage!.completion_tokens).toBe(4);
  });

  test("a model without a projector refuses images with a 400 naming it", async () => {
    // The model file named by path: nothing lies next to it in the models cache.
    const textOnly = await ensureModel("tiny-llama");
    const request = openai("a").chat.completions.create({
      model: textOnly, messages: [{ role: "user", content: [image(dataUri(jpeg, "image/jpeg")), text("hi")] }], max_tokens: 2,
    });
    const { status, message } = await refusal(request);
    expect(status).toBe(400);
    expect(message).toContain(`"${textOnly}"`);
    expect(message).toContain("no vision support");
  });
});

describe("vision in model descriptions", () => {
  test("/api/show lists the vision capability and the projector's facts", async () => {
    const show = async (model: string) =>
      (await (await fetch(`${servers.a!.baseUrl}/api/show`, { method: "POST", body: JSON.stringify({ model }) })).json()) as Record<string, unknown>;
    const vision = await show("tiny-vision");
    expect(vision.capabilities).toContain("vision");
    expect((vision.projector_info as Record<string, unknown>)["general.architecture"]).toBe("clip");
    expect(vision.modelfile).toContain("mmproj-tiny-chat.gguf");
    const plain = await show(await ensureModel("tiny-llama"));
    expect(plain.capabilities).not.toContain("vision");
  });

  test("LM Studio's model lists call a model with a projector a vlm", async () => {
    const v0 = (await (await fetch(`${servers.c!.baseUrl}/api/v0/models`)).json()) as { data: Array<{ id: string; type: string }> };
    expect(v0.data.find((m) => m.id === "tiny-vision")?.type).toBe("vlm");
    const v1 = (await (await fetch(`${servers.c!.baseUrl}/api/v1/models`)).json()) as { models: Array<{ key: string; capabilities: { vision: boolean } }> };
    expect(v1.models.find((m) => m.key === "tiny-vision")?.capabilities.vision).toBe(true);
  });
});

describe("Ollama's images on /api/chat and /api/generate", () => {
  const ollama = () => new Ollama({ host: servers.a!.baseUrl });

  test("/api/chat takes base64 images and counts their tokens", async () => {
    const plain = await ollama().chat({ model: "tiny-vision", messages: [{ role: "user", content: "What is this?" }], stream: false, options: { num_predict: 4, temperature: 0 } });
    const shown = await ollama().chat({
      model: "tiny-vision", messages: [{ role: "user", content: "What is this?", images: [jpeg] }], stream: false, options: { num_predict: 4, temperature: 0 },
    });
    expect(shown.done).toBe(true);
    expect(shown.eval_count).toBe(4);
    expect(shown.prompt_eval_count - plain.prompt_eval_count).toBeGreaterThanOrEqual(IMAGE_TOKENS);
    expect(shown.prompt_eval_count - plain.prompt_eval_count).toBeLessThanOrEqual(IMAGE_TOKENS + 2);
  });

  test("/api/generate takes images, streamed or not, templated or raw", async () => {
    const whole = await ollama().generate({ model: "tiny-vision", prompt: "Describe", images: [png, webp], stream: false, options: { num_predict: 3, temperature: 0 } });
    expect(whole.done).toBe(true);
    expect(whole.eval_count).toBe(3);
    expect(whole.prompt_eval_count).toBeGreaterThan(2 * IMAGE_TOKENS);
    let final;
    for await (const part of await ollama().generate({ model: "tiny-vision", prompt: "Describe", images: [jpeg], raw: true, stream: true, options: { num_predict: 3 } })) {
      if (part.done) final = part;
    }
    expect(final!.prompt_eval_count).toBeGreaterThan(IMAGE_TOKENS);
  });

  test("bad base64 and a model without vision are 400s", async () => {
    const post = (path: string, body: object, server = servers.a!) =>
      fetch(`${server.baseUrl}${path}`, { method: "POST", body: JSON.stringify({ model: "tiny-vision", stream: false, ...body }) });
    const bad = await post("/api/generate", { prompt: "hi", images: ["%%% not base64 %%%"] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toContain("not valid base64");
    const notImage = await post("/api/chat", { messages: [{ role: "user", content: "hi", images: [Buffer.from("plain text").toString("base64")] }] });
    expect(notImage.status).toBe(400);
    // Profile c's model has no projector; its Ollama-style routes are not served, so ask through /v1 above. Here:
    // the same text-only model file named by path on profile a (no sibling projector next to it).
    const textOnly = await post("/api/chat", { model: await ensureModel("tiny-llama"), messages: [{ role: "user", content: "hi", images: [Buffer.from(jpeg).toString("base64")] }] });
    expect(textOnly.status).toBe(400);
    expect(((await textOnly.json()) as { error: string }).error).toContain("does not support vision");
  });
});
