// Model files a request names by path (issue 31): `model` or `draft_model` naming a FIFO, a directory or
// a file that is not GGUF is a 400 in each profile's shape, never a frozen server (opening a FIFO for
// reading blocks until something writes to it) or a 500; on profile c an unknown draft_model is refused
// as LM Studio refuses an unknown model, instead of the loaded model drafting for itself.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "./serve-fixture.ts";

let dir: string;
let fifo: string, directory: string, notGguf: string, fifoProjectorDir: string;
let target: string;
const servers: Partial<Record<"a" | "b" | "c", RunningServer>> = {};

beforeAll(async () => {
  target = await ensureModel("tiny-llama");
  dir = mkdtempSync(join(tmpdir(), "llamux-paths-"));
  fifo = join(dir, "pipe.gguf");
  expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
  directory = join(dir, "folder.gguf");
  mkdirSync(directory);
  notGguf = join(dir, "text.gguf");
  writeFileSync(notGguf, "not a GGUF file, just text\n".repeat(10));
  // a real model whose sibling "projector" is a FIFO: the projector is not picked
  fifoProjectorDir = join(dir, "with-fifo-projector");
  mkdirSync(fifoProjectorDir);
  symlinkSync(target, join(fifoProjectorDir, "tiny.gguf"));
  expect(Bun.spawnSync(["mkfifo", join(fifoProjectorDir, "mmproj-tiny.gguf")]).exitCode).toBe(0);
  const store = (name: string) => ({ LLAMUX_MODELS: join(dir, `store-${name}`), OLLAMA_MODELS: join(dir, `store-${name}`) });
  const common = ["--threads", "1", "--ctx-size", "256", "--parallel", "1"];
  [servers.a, servers.b, servers.c] = await Promise.all([
    startServer(["--profile", "a", ...common], store("a")),
    startServer(["--profile", "b", target, ...common], store("b")),
    startServer(["--profile", "c", target, ...common], store("c")),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.stop()));
  rmSync(dir, { recursive: true, force: true });
});

const post = (profile: "a" | "b" | "c", path: string, body: unknown) =>
  fetch(`${servers[profile]!.baseUrl}${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

const chat = (profile: "a" | "b" | "c", model: string, extra: Record<string, unknown> = {}) =>
  post(profile, "/v1/chat/completions", { model, messages: [{ role: "user", content: "Hi" }], max_tokens: 1, ...extra });

/** The message of an OpenAI-shaped error body, with its status. */
async function openAiError(response: Response): Promise<{ status: number; message: string; param?: string | null }> {
  const body = (await response.json()) as { error: { message: string; param?: string | null } };
  return { status: response.status, message: body.error.message, param: body.error.param };
}

describe("a FIFO named *.gguf", () => {
  test("as `model`: a 400 on every profile, and every server goes on answering", async () => {
    const [generate, b, c, show] = await Promise.all([
      post("a", "/api/generate", { model: fifo, prompt: "Hi", stream: false }),
      chat("b", fifo),
      chat("c", fifo),
      post("a", "/api/show", { model: fifo }),
    ]);
    expect(generate.status).toBe(400);
    expect(((await generate.json()) as { error: string }).error).toBe(`Cannot load model "${fifo}": it is a FIFO (named pipe), not a GGUF file`);
    expect(await openAiError(b)).toEqual({ status: 400, message: `Cannot load model "${fifo}": it is a FIFO (named pipe), not a GGUF file`, param: "model" });
    expect((await openAiError(c)).status).toBe(400);
    expect(show.status).toBe(400);
    for (const server of Object.values(servers)) expect((await fetch(`${server.baseUrl}/v1/models`)).status).toBe(200);
  });

  test("as `draft_model` on profile c: a 400 naming the field", async () => {
    const refused = await openAiError(await chat("c", target, { draft_model: fifo }));
    expect(refused).toEqual({ status: 400, message: `Cannot load model "${fifo}": it is a FIFO (named pipe), not a GGUF file`, param: "draft_model" });
  });

  test("as a model's sibling projector (mmproj-*.gguf): left out, and the model answers", async () => {
    const response = await chat("b", join(fifoProjectorDir, "tiny.gguf"));
    expect(response.status).toBe(200);
  });
});

describe("a directory or a non-GGUF file named *.gguf", () => {
  for (const [what, path, reason] of [["a directory", () => directory, "it is a directory, not a GGUF file"], ["a text file", () => notGguf, "file is not GGUF"]] as const) {
    test(`${what} as \`model\` or \`draft_model\`: a 400 in each profile's shape, not a 500`, async () => {
      const expected = `Cannot load model "${path()}": ${reason}`;
      const generate = await post("a", "/api/generate", { model: path(), prompt: "Hi", stream: false });
      expect({ status: generate.status, error: ((await generate.json()) as { error: string }).error }).toEqual({ status: 400, error: expected });
      expect(await openAiError(await chat("b", path()))).toEqual({ status: 400, message: expected, param: "model" });
      expect(await openAiError(await chat("c", target, { draft_model: path() }))).toEqual({ status: 400, message: expected, param: "draft_model" });
      const completions = await post("c", "/v1/completions", { model: target, prompt: "Hi", max_tokens: 1, draft_model: path() });
      expect((await openAiError(completions)).param).toBe("draft_model");
    });
  }
});

test("profile c: an unknown draft_model is refused as LM Studio refuses an unknown model, not replaced by the loaded model", async () => {
  const refused = await openAiError(await chat("c", target, { draft_model: "no-such-draft" }));
  expect(refused.status).toBe(400);
  expect(refused.param).toBe("draft_model");
  expect(refused.message).toStartWith(`Invalid draft model identifier "no-such-draft". Please specify a valid downloaded model (e.g., `);
  // the main model still answers, with and without a draft model that exists
  expect((await chat("c", target)).status).toBe(200);
});
