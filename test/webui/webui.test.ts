// The web UI end to end: a real `llamux serve --profile c` (store in a temporary LLAMUX_MODELS, hub at the
// local fixture through HF_ENDPOINT) driven by Debian's Chromium through playwright-core. Screenshots of
// each tab go to test-artifacts/webui/.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startHubServer, type HubServer } from "../fixtures/hub-server.ts";
import { startServer, type RunningServer } from "../server/serve-fixture.ts";
import { launchChromium } from "./browser.ts";
import { ggufKv, readGgufHeaderSync, readGgufTensorBytes, writeGguf } from "../../src/store/gguf.ts";
import { modelConfigFromHeader } from "../../src/store/model-config.ts";
import { CONFIG_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, ModelStore, layerMediaType } from "../../src/store/model-store.ts";

const ARTIFACTS = join(import.meta.dir, "..", "..", "test-artifacts", "webui");
// The hub fixture keeps repository ids in lower case.
const REPO = "llamux-test/tiny-llama-gguf";
const MODEL_KEY = `hf.co/${REPO}:Q4_K_M`;
// A real PNG, as a user would upload it.
const PNG = readFileSync(join(import.meta.dir, "..", "fixtures", "images", "llama1-icon.png"));

const THINKING_KEY = "thinker:latest";
// Its chat template leaves the reply inside <think>: a random-weight reply of a few tokens is all reasoning.
const THINKING_TEMPLATE = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n<think>\n";

/** Stores a copy of a GGUF whose chat template is THINKING_TEMPLATE under THINKING_KEY, as `llamux create` would. */
async function storeThinkingModel(root: string, source: string): Promise<void> {
  const header = readGgufHeaderSync(source);
  const metadata = new Map(header.metadata);
  metadata.set("tokenizer.chat_template", ggufKv.string(THINKING_TEMPLATE));
  const copy = join(root, "thinker.gguf");
  await writeGguf(copy, {
    metadata,
    tensors: [...header.tensors].sort((a, b) => a.offset - b.offset).map((t) => ({ name: t.name, shape: t.shape, type: t.type, data: readGgufTensorBytes(source, t) })),
  });
  const store = new ModelStore(root);
  const model = await store.importBlob(readFileSync(copy));
  rmSync(copy);
  const config = await store.importBlob(new TextEncoder().encode(JSON.stringify(modelConfigFromHeader(readGgufHeaderSync(source, { maxArrayLength: 0 })))));
  await store.writeManifest(THINKING_KEY, {
    schemaVersion: 2,
    mediaType: MANIFEST_MEDIA_TYPE,
    config: { mediaType: CONFIG_MEDIA_TYPE, ...config },
    layers: [{ mediaType: layerMediaType.model, ...model }],
  });
}

let hub: HubServer;
let server: RunningServer;
let browser: Browser;
let page: Page;
let storeDir: string;
const foreignRequests: string[] = [];
const policyViolations: string[] = [];

/**
 * Waits until `expression` is true in the page. Playwright's waitForFunction evaluates a string with
 * eval inside the page, which the UI's Content-Security-Policy forbids; page.evaluate is not bound by it.
 */
async function waitInPage(expression: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate<boolean>(expression))) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting in the page for ${expression}`);
    await Bun.sleep(50);
  }
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

async function openTab(name: string): Promise<void> {
  await page.getByRole("tab", { name }).click();
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const tinyLlama = readFileSync(await ensureModel("tiny-llama"));
  const tinyLfm2 = readFileSync(await ensureModel("tiny-lfm2"));
  hub = await startHubServer({
    [REPO]: {
      files: [
        { path: "README.md", content: new TextEncoder().encode("# Tiny Llama\n") },
        { path: "tiny-llama-Q8_0.gguf", content: tinyLfm2 },
        { path: "tiny-llama-Q4_K_M.gguf", content: tinyLlama },
        // its vision projector: the download makes a vision model
        { path: "mmproj-tiny-llama-F16.gguf", content: readFileSync(await ensureModel("tiny-mmproj")) },
      ],
    },
  });
  storeDir = mkdtempSync(join(tmpdir(), "llamux-webui-"));
  await storeThinkingModel(storeDir, await ensureModel("tiny-lfm2"));
  server = await startServer(["--profile", "c", "--parallel", "1", "--threads", "2"], {
    HF_ENDPOINT: hub.url, LLAMUX_MODELS: storeDir, ...(process.env.WEBUI_TEST_DEBUG ? { LLAMUX_LOG_LEVEL: "debug" } : {}),
  });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  // The page must not reach anything but the llamux server (checked by the last test).
  page.on("request", (request) => {
    if (!request.url().startsWith(`${server.baseUrl}/`) && !request.url().startsWith("data:")) foreignRequests.push(request.url());
  });
  // The UI runs under its Content-Security-Policy; Chromium reports what the policy blocks on the console.
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) policyViolations.push(message.text());
  });
});

afterAll(async () => {
  if (process.env.WEBUI_TEST_DEBUG) console.error(server?.stderr());
  await browser?.close();
  await server?.stop();
  await hub?.stop();
  if (storeDir) rmSync(storeDir, { recursive: true, force: true });
});

describe("web UI", () => {
  test("is served at / in profile c and at /ui", async () => {
    for (const path of ["/", "/ui"]) {
      const response = await fetch(`${server.baseUrl}${path}`);
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('<script type="module" src="/ui/app.js">');
    }
    const script = await fetch(`${server.baseUrl}/ui/app.js`);
    expect(script.headers.get("content-type")).toContain("javascript");
    expect((await script.text()).length).toBeGreaterThan(1000);
  });

  test("Search finds the repository, recommends Q4_K_M and downloads it with a progress bar that survives a reload", async () => {
    await page.goto(`${server.baseUrl}/`);
    await openTab("Search");
    await page.getByLabel("Model name").fill("tiny-llama");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.getByRole("button", { name: REPO }).click();
    const rows = page.locator("#panel-search tbody tr");
    await rows.first().waitFor();
    expect(await rows.count()).toBe(2);
    // Q4_K_M first and recommended, with its size
    await expect(rows.first().innerText()).resolves.toContain("Q4_K_M");
    await expect(rows.first().innerText()).resolves.toContain("Recommended");
    await expect(rows.nth(1).innerText()).resolves.toContain("Q8_0");
    expect(await page.locator("#panel-search").innerText()).toContain("Includes a vision projector");
    await shot("search");

    await page.getByRole("button", { name: "Download Q4_K_M" }).click();
    await page.getByRole("progressbar", { name: `Download of ${REPO} Q4_K_M` }).waitFor();
    await waitInPage('document.querySelector("li.download progress")?.value === 100');
    await shot("search-downloaded");
    // After a reload the page finds the job again in localStorage and asks the server for its state: the
    // stored state is cut down to the job id first, so the 100% can only come from polling the job.
    await page.evaluate(`localStorage.setItem("llamux.downloads", JSON.stringify(JSON.parse(localStorage.getItem("llamux.downloads")).map((d) => ({ jobId: d.jobId, label: d.label }))))`);
    await page.reload();
    await openTab("Search");
    await waitInPage('document.querySelector("li.download progress")?.value === 100');
    expect(await page.locator("li.download").innerText()).toContain("completed");
    const models = await (await fetch(`${server.baseUrl}/api/v1/models`)).json() as { models: Array<{ key: string }> };
    expect(models.models.map((m) => m.key)).toContain(MODEL_KEY);
  });

  test("My Models lists the download with size, quantization and architecture", async () => {
    await openTab("My Models");
    const row = page.locator(`tr[data-model="${MODEL_KEY}"]`);
    await row.waitFor();
    const text = await row.innerText();
    expect(text).toContain("Q4_K_M");
    expect(text).toContain("llama");
    expect(text).toContain("Not loaded");
    expect(text).toContain("vision");
    expect(text).toMatch(/\d+(\.\d+)? (KB|MB)/);
    await shot("models");
  });

  test("Developer starts serving the model with a chosen context length", async () => {
    await openTab("Developer");
    await page.locator("#dev-model").selectOption(MODEL_KEY);
    await page.locator("#dev-ctx").fill("2048");
    await page.getByRole("button", { name: "Start serving" }).click();
    await page.getByText(`${MODEL_KEY} is loaded and serving`).waitFor();
    const models = await (await fetch(`${server.baseUrl}/api/v1/models`)).json() as { models: Array<{ key: string; loaded_instances: Array<{ config: { context_length: number } }> }> };
    expect(models.models.find((m) => m.key === MODEL_KEY)?.loaded_instances[0]?.config.context_length).toBe(2048);
    await page.locator("dl.server-info").waitFor();
    expect(await page.locator("dl.server-info").innerText()).toContain(String(server.port));
    expect(await page.locator("pre").first().innerText()).toContain(`${server.baseUrl}/v1/chat/completions`);
  });

  test("Chat streams a reply, keeps the conversation after a reload, and attaches an uploaded image", async () => {
    await openTab("Chat");
    await page.locator("#chat-model").selectOption(MODEL_KEY);
    await page.getByLabel("Max tokens").fill("12");
    await page.getByLabel("Temperature").fill("0");
    await page.locator("#chat-input").fill("Hello there");
    const requestSeen = page.waitForRequest((r) => r.url().endsWith("/v1/chat/completions"));
    await page.getByRole("button", { name: "Send" }).click();
    const sent = JSON.parse((await requestSeen).postData() ?? "{}") as { stream: boolean; max_tokens: number; temperature: number; messages: Array<{ content: unknown }> };
    expect(sent).toMatchObject({ stream: true, max_tokens: 12, temperature: 0 });
    const note = page.locator("article.msg.assistant .note").last();
    await note.waitFor();
    expect(await note.innerText()).toMatch(/^\d+ tokens · [\d.]+ tok\/s/);
    expect((await page.locator("article.msg.assistant .content").last().innerText()).length).toBeGreaterThan(0);
    await shot("chat");

    await page.reload();
    await page.locator("article.msg.user").first().waitFor();
    expect(await page.locator("article.msg.user").first().innerText()).toContain("Hello there");

    // An image by the upload button: shown in the composer, sent as an image_url part.
    await page.locator("#chat-file").setInputFiles({ name: "dot.png", mimeType: "image/png", buffer: PNG });
    await page.getByRole("img", { name: "Attachment 1" }).waitFor();
    await shot("chat-image-attached");
    await page.locator("#chat-input").fill("What is in this picture?");
    const imageRequest = page.waitForRequest((r) => r.url().endsWith("/v1/chat/completions"));
    await page.getByRole("button", { name: "Send" }).click();
    const withImage = JSON.parse((await imageRequest).postData() ?? "{}") as { messages: Array<{ content: unknown }> };
    const parts = withImage.messages.at(-1)!.content as Array<{ type: string; image_url?: { url: string } }>;
    expect(parts.find((p) => p.type === "image_url")?.image_url?.url).toStartWith("data:image/png;base64,");
    // The model came with its projector: the image is read and a reply streams back.
    const imageReply = page.locator("article.msg.assistant").nth(1);
    await imageReply.locator(".note, .error").first().waitFor();
    expect(await imageReply.locator(".error").count()).toBe(0);
    expect(await imageReply.locator(".note").innerText()).toMatch(/^\d+ tokens/);
    await shot("chat-vision");

    // Images also come by URL and by drag and drop onto the composer.
    await page.locator("#chat-image-url").fill(`data:image/png;base64,${PNG.toString("base64")}`);
    await page.getByRole("button", { name: "Add URL" }).click();
    await page.getByRole("img", { name: "Attachment 1" }).waitFor();
    const drop = await page.evaluateHandle(`(() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([Uint8Array.from(atob("${PNG.toString("base64")}"), (c) => c.charCodeAt(0))], "dropped.png", { type: "image/png" }));
      return transfer;
    })()`);
    await page.locator("form.composer").dispatchEvent("drop", { dataTransfer: drop });
    await page.getByRole("img", { name: "Attachment 2" }).waitFor();
    await page.getByRole("button", { name: "Remove attachment 2" }).click();
    await page.getByRole("button", { name: "Remove attachment 1" }).click();
    expect(await page.locator(".composer .attachments").count()).toBe(0);
  });

  test("Chat shows a reply's reasoning apart from its answer", async () => {
    await page.getByRole("button", { name: "New chat" }).click();
    await page.locator("#chat-model").selectOption(THINKING_KEY);
    await page.getByLabel("Max tokens").fill("6");
    await page.locator("#chat-input").fill("Think first");
    await page.getByRole("button", { name: "Send" }).click();
    const reply = page.locator("article.msg.assistant").last();
    await reply.locator(".note").waitFor();
    // Shown folded once the reply is done: the text sits in the <details>, the answer stays empty.
    expect(((await reply.locator("details.reasoning").textContent()) ?? "").replace(/^Reasoning/, "").trim().length).toBeGreaterThan(0);
    expect(await reply.locator(".content").innerText()).toBe("");
    await shot("chat-reasoning");
  });

  test("Stop ends a streaming reply", async () => {
    await page.getByRole("button", { name: "New chat" }).click();
    await page.locator("#chat-model").selectOption(MODEL_KEY);
    await page.getByLabel("Max tokens").fill("1900");
    // Random weights may end early at EOS: the test asks the server to ignore it (a field the UI does not send).
    await page.route("**/v1/chat/completions", async (route) => {
      const body = JSON.parse(route.request().postData() ?? "{}") as Record<string, unknown>;
      await route.continue({ postData: JSON.stringify({ ...body, ignore_eos: true }) });
    });
    await page.locator("#chat-input").fill("Tell me a long story");
    await page.getByRole("button", { name: "Send" }).click();
    await waitInPage('(document.querySelector("article.msg.assistant:last-of-type .content")?.textContent ?? "").length > 0')
    // Stopped mid-way: the reply has text but is far from its 1900 tokens.;
    await page.getByRole("button", { name: "Stop" }).click();
    const note = page.locator("article.msg.assistant .note").last();
    await note.waitFor();
    expect(await note.innerText()).toBe("Stopped");
    expect((await page.locator("article.msg.assistant .content").last().innerText()).length).toBeGreaterThan(0);
    await page.unroute("**/v1/chat/completions");
    await page.getByRole("button", { name: "Send" }).waitFor();
  });

  test("Developer shows the request log and stops serving", async () => {
    await openTab("Developer");
    // The finished chat: its duration, token counts and speed.
    const entry = page.locator("tr.log-entry", { hasText: "POST /v1/chat/completions" }).filter({ hasText: "tok/s" }).first();
    await entry.waitFor();
    expect(await entry.innerText()).toMatch(/\d+ ms\s+\d+ \/ \d+\s+[\d.]+ tok\/s/);
    await page.locator("tr.log-entry", { hasText: "cancelled" }).first().waitFor();
    await shot("developer");
    await page.getByRole("button", { name: "Stop serving" }).click();
    await page.getByText(`${MODEL_KEY} is not loaded`).waitFor();
    const models = await (await fetch(`${server.baseUrl}/api/v1/models`)).json() as { models: Array<{ key: string; loaded_instances: unknown[] }> };
    expect(models.models.find((m) => m.key === MODEL_KEY)?.loaded_instances).toEqual([]);
  });

  test("My Models deletes a model after confirmation", async () => {
    await openTab("My Models");
    await page.getByRole("button", { name: `Delete ${MODEL_KEY}` }).click();
    const dialog = page.getByRole("dialog", { name: "Delete model?" });
    await dialog.waitFor();
    await shot("models-delete-confirm");
    await dialog.getByRole("button", { name: "Delete" }).click();
    await page.locator(`tr[data-model="${MODEL_KEY}"]`).waitFor({ state: "detached" });
    const models = await (await fetch(`${server.baseUrl}/api/v1/models`)).json() as { models: Array<{ key: string }> };
    expect(models.models.map((m) => m.key)).not.toContain(MODEL_KEY);
  });

  test("the UI's own routes answer bad input with clear errors in profile c's shape", async () => {
    const bad = await fetch(`${server.baseUrl}/api/v1/hub/repo?id=not-a-repo`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { message: 'Cannot look up repository "not-a-repo": expected "owner/name"', param: "id" } });
    const unknown = await fetch(`${server.baseUrl}/api/v1/hub/repo?id=nobody/nothing`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toContain("nobody/nothing");
    const missing = await fetch(`${server.baseUrl}/api/v1/models/delete`, { method: "POST", body: JSON.stringify({ model: "no-such-model" }) });
    expect(missing.status).toBe(404);
    const malformed = await fetch(`${server.baseUrl}/api/v1/models/delete`, { method: "POST", body: "{" });
    expect(malformed.status).toBe(400);
  });

  test("tabs follow the keyboard (arrow keys, Home, End)", async () => {
    await page.getByRole("tab", { name: "Chat" }).click();
    await page.keyboard.press("ArrowRight");
    expect(await page.getByRole("tab", { name: "Search" }).getAttribute("aria-selected")).toBe("true");
    expect(await page.evaluate<string | undefined>("document.activeElement?.textContent")).toBe("Search");
    await page.keyboard.press("End");
    expect(await page.getByRole("tab", { name: "Developer" }).getAttribute("aria-selected")).toBe("true");
    await page.keyboard.press("ArrowRight");
    expect(await page.getByRole("tab", { name: "Chat" }).getAttribute("aria-selected")).toBe("true");
    expect(await page.locator("#panel-chat").isVisible()).toBe(true);
    expect(await page.locator("#panel-developer").isVisible()).toBe(false);
  });

  test("works at phone width", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await openTab("Chat");
    const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
    expect(overflow).toBeLessThanOrEqual(0);
    await shot("chat-phone");
    await page.emulateMedia({ colorScheme: "dark" });
    await openTab("Developer");
    await shot("developer-phone-dark");
  });

  test("the page made no request to anything but the llamux server", () => {
    expect(foreignRequests).toEqual([]);
  });

  test("the page cannot be framed, and its Content-Security-Policy blocked nothing it does", async () => {
    const response = await fetch(`${server.baseUrl}/ui`);
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(policyViolations).toEqual([]);
  });
});
