// Profile a's store routes against hostile requests, through a real `llamux serve` over a temporary
// store: /api/create naming files that are not models (nothing copied, nothing told), adapters that
// are not LoRA adapters, failed creates that leave no blobs, a server killed during a create, blob
// uploads streamed to disk, and JSON bodies over the limit.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../../scripts/gen-models.ts";
import { ModelStore } from "../../../src/store/model-store.ts";
import { startServer, type RunningServer } from "../serve-fixture.ts";

let server: RunningServer;
let storeDir: string;
let scratch: string;
let modelPath: string;
let secretPath: string;

const SECRET = "root:$6$very-secret-hash:19000:0:99999:7:::\n";
const sha256 = (bytes: Uint8Array | string) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const post = (path: string, body: unknown) =>
  fetch(`${server.baseUrl}${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
const blobFiles = () => readdirSync(join(storeDir, "blobs")).sort();

/** Peak resident memory of the server process so far, in MiB. */
function peakRssMib(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmHWM:"))!;
  return Number(/(\d+)/.exec(line)![1]) / 1024;
}

beforeAll(async () => {
  storeDir = mkdtempSync(join(tmpdir(), "llamux-hostile-store-"));
  scratch = mkdtempSync(join(tmpdir(), "llamux-hostile-files-"));
  secretPath = join(scratch, "shadow");
  writeFileSync(secretPath, SECRET);
  modelPath = await ensureModel("tiny-llama");
  server = await startServer(["--profile", "a"], { OLLAMA_MODELS: storeDir });
  // One model in the store, so that the blobs directory exists and has known contents.
  expect((await post("/api/create", { model: "base", from: modelPath, stream: false })).status).toBe(200);
}, 120_000);
afterAll(async () => {
  await server?.stop();
  rmSync(storeDir, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

describe("/api/create from a path on the server", () => {
  test("a file that is not a GGUF is refused before anything is copied, and nothing about it is told", async () => {
    const before = blobFiles();
    for (const body of [
      { model: "stolen", from: secretPath, stream: false },
      { model: "stolen", modelfile: `FROM ${secretPath}`, stream: false },
      { model: "stolen", from: secretPath },
    ]) {
      const response = await post("/api/create", body);
      const text = await response.text();
      expect(response.status).toBe(400);
      expect(text).toContain("is not a GGUF model file");
      expect(text).not.toContain("sha256");
      expect(text).not.toContain(sha256(SECRET).slice(7, 19));
      expect(text).not.toContain("very-secret");
    }
    expect(blobFiles()).toEqual(before);
    expect((await (await fetch(`${server.baseUrl}/api/tags`)).json() as { models: Array<{ name: string }> }).models.map((m) => m.name)).toEqual(["base:latest"]);
  });

  test("a file that starts like a GGUF but whose header does not read is refused without a copy", async () => {
    const truncated = join(scratch, "truncated.gguf");
    writeFileSync(truncated, readFileSync(modelPath).subarray(0, 200));
    const before = blobFiles();
    const response = await post("/api/create", { model: "broken", from: truncated, stream: false });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: string };
    expect(error).toContain("is not a GGUF model file: file ends inside the header");
    expect(error).not.toContain("sha256");
    expect(blobFiles()).toEqual(before);
  });

  test("a create that fails after copying its file removes the copy", async () => {
    // A GGUF file not in the store yet (the model with padding after it), and an adapter that is not
    // one: the create fails after the copy.
    const fresh = join(scratch, "fresh.gguf");
    writeFileSync(fresh, Buffer.concat([readFileSync(modelPath), Buffer.alloc(4096)]));
    const notAdapter = new TextEncoder().encode("not an adapter at all");
    expect((await fetch(`${server.baseUrl}/api/blobs/${sha256(notAdapter)}`, { method: "POST", body: notAdapter })).status).toBe(201);
    const before = blobFiles();
    const response = await post("/api/create", { model: "half", from: fresh, adapters: { "lora.gguf": sha256(notAdapter) }, stream: false });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toContain('adapter "lora.gguf" is not a GGUF file');
    expect(blobFiles()).toEqual(before);
  });
});

describe("ADAPTER", () => {
  test("a GGUF that is not a LoRA adapter is refused at create time, not on every later chat", async () => {
    const model = new Uint8Array(readFileSync(modelPath));
    expect([200, 201]).toContain((await fetch(`${server.baseUrl}/api/blobs/${sha256(model)}`, { method: "POST", body: model })).status);
    const response = await post("/api/create", { model: "bad-adapter", from: "base", adapters: { "lora.gguf": sha256(model) }, stream: false });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toContain('adapter "lora.gguf" is not a LoRA adapter');
    const viaModelfile = await post("/api/create", { model: "bad-adapter", modelfile: `FROM base\nADAPTER @${sha256(model)}`, stream: false });
    expect(viaModelfile.status).toBe(400);
    expect(((await viaModelfile.json()) as { error: string }).error).toContain("is not a LoRA adapter");
    const path = await post("/api/create", { model: "bad-adapter", modelfile: `FROM base\nADAPTER ${secretPath}`, stream: false });
    expect(path.status).toBe(400);
    expect(await path.text()).not.toContain("very-secret");
    const names = ((await (await fetch(`${server.baseUrl}/api/tags`)).json()) as { models: Array<{ name: string }> }).models.map((m) => m.name);
    expect(names).not.toContain("bad-adapter:latest");
  });

  test("a real LoRA adapter for the model's architecture is accepted", async () => {
    const lora = new Uint8Array(readFileSync(await ensureModel("tiny-llama-lora")));
    expect([200, 201]).toContain((await fetch(`${server.baseUrl}/api/blobs/${sha256(lora)}`, { method: "POST", body: lora })).status);
    const response = await post("/api/create", { model: "adapted", from: "base", adapters: { "lora.gguf": sha256(lora) }, stream: false });
    expect(response.status).toBe(200);
  });
});

describe("request bodies", () => {
  test("a blob upload streams to disk: 256 MiB raise the server's peak memory by far less", async () => {
    const chunk = new Uint8Array(1 << 20).fill(7);
    const hash = createHash("sha256");
    for (let i = 0; i < 256; i++) hash.update(chunk);
    const digest = `sha256:${hash.digest("hex")}`;
    const upload = (target: string) => {
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent === 256) return controller.close();
          controller.enqueue(chunk);
          sent++;
        },
      });
      return fetch(`${server.baseUrl}/api/blobs/${target}`, { method: "POST", body, duplex: "half" } as RequestInit);
    };
    const before = peakRssMib(server.pid);
    // A wrong digest is found while streaming, and nothing is kept.
    const wrong = await upload(sha256("something else"));
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: string }).error).toContain("digest mismatch");
    expect(blobFiles().some((name) => name.startsWith(".llamux-tmp-"))).toBe(false);
    expect((await upload(digest)).status).toBe(201);
    console.log(`a 256 MiB blob upload raised the server's peak memory by ${(peakRssMib(server.pid) - before).toFixed(0)} MiB`);
    expect(peakRssMib(server.pid) - before).toBeLessThan(96);
    rmSync(join(storeDir, "blobs", `sha256-${digest.slice(7)}`));
  }, 60_000);

  test("4 concurrent 100 MiB bodies (chunked, no length given) are refused, and the server holds little of them", async () => {
    const before = peakRssMib(server.pid);
    const chunk = new TextEncoder().encode("x".repeat(1 << 20));
    const hundredMib = () => {
      let sent = 0;
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent === 0) controller.enqueue(new TextEncoder().encode('{"model":"base","prompt":"'));
          if (sent++ === 100) return controller.close();
          controller.enqueue(chunk);
        },
      });
    };
    const answers = await Promise.all(Array.from({ length: 4 }, () =>
      fetch(`${server.baseUrl}/api/chat`, { method: "POST", body: hundredMib(), duplex: "half" } as RequestInit).then((r) => r.status, () => 413)));
    expect(answers).toEqual([413, 413, 413, 413]);
    // Each is read only up to the 32 MiB limit (713 MB for four 100 MiB bodies when the limit was 100 MiB).
    console.log(`four 100 MiB bodies raised the server's peak memory by ${(peakRssMib(server.pid) - before).toFixed(0)} MiB`);
    expect(peakRssMib(server.pid) - before).toBeLessThan(300);
  }, 60_000);

  test("a JSON body over 32 MiB is refused with 413 before it is parsed", async () => {
    const big = JSON.stringify({ model: "base", prompt: "x".repeat(33 * 1024 * 1024) });
    const response = await fetch(`${server.baseUrl}/api/generate`, { method: "POST", body: big, headers: { "Content-Type": "application/json" } });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: string }).error).toContain("32 MiB");
  });
});

describe("a server killed during a create", () => {
  test("leaves a consistent store: no half blob, no half manifest, the next start lists and creates", async () => {
    const dir = mkdtempSync(join(tmpdir(), "llamux-killed-create-"));
    try {
      // A large GGUF (the model padded with zeros) so that the copy takes a while.
      const large = join(scratch, "large.gguf");
      writeFileSync(large, Buffer.concat([readFileSync(modelPath), Buffer.alloc(300 << 20)]));
      for (const delayMs of [20, 150, 400]) {
        const doomed = await startServer(["--profile", "a"], { OLLAMA_MODELS: dir });
        const pending = fetch(`${doomed.baseUrl}/api/create`, { method: "POST", body: JSON.stringify({ model: `killed-${delayMs}`, from: large }) }).catch(() => undefined);
        await Bun.sleep(delayMs);
        process.kill(doomed.pid, "SIGKILL");
        await pending;
        const store = new ModelStore(dir);
        if (!existsSync(join(dir, "blobs"))) continue;
        // Every blob file is complete: named by the digest of what it holds (temporary files aside).
        for (const name of readdirSync(join(dir, "blobs")).filter((n) => n.startsWith("sha256-"))) {
          const bytes = readFileSync(join(dir, "blobs", name));
          expect(sha256(bytes)).toBe(name.replace("sha256-", "sha256:"));
        }
        for (const model of store.list()) {
          for (const layer of model.manifest.layers) expect(store.hasBlob(layer.digest)).toBe(true);
        }
      }
      const restarted = await startServer(["--profile", "a"], { OLLAMA_MODELS: dir });
      try {
        const response = await fetch(`${restarted.baseUrl}/api/create`, { method: "POST", body: JSON.stringify({ model: "after", from: modelPath, stream: false }) });
        expect(response.status).toBe(200);
        expect(readdirSync(join(dir, "blobs")).some((name) => name.startsWith(".llamux-tmp-"))).toBe(false);
        const names = ((await (await fetch(`${restarted.baseUrl}/api/tags`)).json()) as { models: Array<{ name: string }> }).models.map((m) => m.name);
        expect(names).toContain("after:latest");
      } finally {
        await restarted.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
