// Pulls from a hub-like server on loopback (test/fixtures/hub-server.ts) into a fresh store.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listHubFiles, searchHubModels } from "../../src/store/hub/hub-api.ts";
import { chooseGgufFile, listQuantizations, quantizationOf } from "../../src/store/hub/quantization.ts";
import { ModelStore } from "../../src/store/model-store.ts";
import { type PullOptions, pullModel } from "../../src/store/pull.ts";
import type { PullProgress } from "../../src/store/pull-progress.ts";
import { type HubServer, startHubServer } from "../fixtures/hub-server.ts";
import { tinyGguf } from "../fixtures/tiny-gguf.ts";

const dir = mkdtempSync(join(tmpdir(), "llamux-hub-test-"));
let hub: HubServer;
let stores = 0;
const freshStore = () => new ModelStore(join(dir, `store-${++stores}`));
const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const files: Record<string, Uint8Array> = {};
const pull = (store: ModelStore, name: string, options: PullOptions = {}) => pullModel(store, name, { hub: { endpoint: hub.url }, retries: 2, ...options });

beforeAll(async () => {
  for (const quant of ["Q4_K_M", "Q8_0", "Q2_K"]) files[quant] = await tinyGguf(`model ${quant}`, { padBytes: 256 << 10 });
  files.projector = await tinyGguf("projector", { architecture: "clip" });
  files.other = await tinyGguf("other model");
  hub = await startHubServer({
    "llamux-test/Tiny-GGUF": {
      files: [
        { path: "README.md", content: new TextEncoder().encode("# Tiny") },
        { path: "Tiny-Q4_K_M.gguf", content: files.Q4_K_M! },
        { path: "Tiny-Q8_0.gguf", content: files.Q8_0! },
        { path: "Tiny-Q2_K.gguf", content: files.Q2_K! },
        { path: "mmproj-Tiny-F16.gguf", content: files.projector! },
      ],
    },
    "llamux-test/NoDefault-GGUF": { files: [{ path: "nodefault-q8_0.gguf", content: files.other! }, { path: "nodefault-f16.gguf", content: files.Q2_K! }] },
    "llamux-test/Gated-GGUF": { files: [{ path: "gated-Q4_K_M.gguf", content: files.other! }], token: "hf_secret" },
    "llamux-test/NotGguf-GGUF": { files: [{ path: "broken-Q4_K_M.gguf", content: new TextEncoder().encode("this is not a GGUF file at all") }] },
  });
});

afterAll(async () => {
  await hub.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("choosing the file", () => {
  test("quantizations are read from file names", () => {
    expect(quantizationOf("Llama-3.2-1B-Instruct-Q4_K_M.gguf")).toBe("Q4_K_M");
    expect(quantizationOf("qwen2.5-0.5b-instruct-q8_0.gguf")).toBe("Q8_0");
    expect(quantizationOf("model-UD-Q4_K_XL.gguf")).toBe("Q4_K_XL");
    expect(quantizationOf("model-fp16.gguf")).toBe("F16");
    expect(quantizationOf("model-IQ4_XS-00001-of-00002.gguf")).toBe("IQ4_XS");
    expect(quantizationOf("model.gguf")).toBeUndefined();
  });

  test("latest means Q4_K_M, else the closest; a split model is refused", () => {
    const listing = (...paths: string[]) => paths.map((path) => ({ path }));
    expect(chooseGgufFile("r", listing("m-Q8_0.gguf", "m-Q4_K_M.gguf", "m-Q2_K.gguf"), "latest").path).toBe("m-Q4_K_M.gguf");
    expect(chooseGgufFile("r", listing("m-Q8_0.gguf", "m-Q5_K_M.gguf", "m-F16.gguf"), "latest").path).toBe("m-Q5_K_M.gguf");
    expect(chooseGgufFile("r", listing("m-F16.gguf", "m-Q8_0.gguf"), "latest").path).toBe("m-Q8_0.gguf");
    expect(chooseGgufFile("r", listing("m-Q8_0.gguf", "m-q4_k_m.gguf"), "Q4_K_M").path).toBe("m-q4_k_m.gguf");
    expect(chooseGgufFile("r", listing("a/m-Q8_0.gguf"), "m-q8_0.GGUF").path).toBe("a/m-Q8_0.gguf");
    expect(() => chooseGgufFile("r", listing("m-Q4_K_M-00001-of-00002.gguf", "m-Q4_K_M-00002-of-00002.gguf"), "latest")).toThrow("split into 2 files");
    expect(listQuantizations(listing("mmproj-F16.gguf", "m-Q8_0.gguf", "m-Q4_K_M.gguf")).map((q) => q.quantization)).toEqual(["Q4_K_M", "Q8_0"]);
  });

  test("listHubFiles and searchHubModels read the hub's API", async () => {
    const listed = await listHubFiles("llamux-test/Tiny-GGUF", { endpoint: hub.url });
    expect(listed.find((f) => f.path === "Tiny-Q8_0.gguf")).toEqual({ path: "Tiny-Q8_0.gguf", size: files.Q8_0!.byteLength, sha256: sha(files.Q8_0!) });
    const found = await searchHubModels("nodefault", { endpoint: hub.url });
    expect(found.map((m) => m.id)).toEqual(["llamux-test/nodefault-gguf"]);
    expect(hub.requests.at(-1)?.path).toBe("/api/models");
  });
});

describe("pull", () => {
  test("pulls the default quantization and the mmproj sibling, and reports progress like /api/pull", async () => {
    const store = freshStore();
    const events: PullProgress[] = [];
    const name = await pull(store, "hf.co/llamux-test/Tiny-GGUF", { onProgress: (e) => events.push(e) });
    expect(name).toBe("hf.co/llamux-test/Tiny-GGUF:latest");
    const model = store.resolve("hf.co/llamux-test/tiny-gguf")!;
    expect(readFileSync(model.modelPath)).toEqual(Buffer.from(files.Q4_K_M!));
    expect(readFileSync(model.projectorPath!)).toEqual(Buffer.from(files.projector!));
    expect(model.config).toMatchObject({ model_format: "gguf", model_family: "llama", model_families: ["llama", "clip"], file_type: "Q4_K_M" });
    const statuses = [...new Set(events.map((e) => e.status))];
    expect(statuses).toEqual(["pulling manifest", `pulling ${sha(files.Q4_K_M!).slice(0, 12)}`, `pulling ${sha(files.projector!).slice(0, 12)}`, "verifying sha256 digest", "writing manifest", "success"]);
    const last = events.filter((e) => e.digest === `sha256:${sha(files.Q4_K_M!)}`).at(-1)!;
    expect(last).toEqual({ status: `pulling ${sha(files.Q4_K_M!).slice(0, 12)}`, digest: `sha256:${sha(files.Q4_K_M!)}`, total: files.Q4_K_M!.byteLength, completed: files.Q4_K_M!.byteLength });
    // the CDN (another host) never sees credentials, and the download was a redirect from resolve/main
    expect(hub.requests.some((r) => r.server === "hub" && r.path === "/llamux-test/Tiny-GGUF/resolve/main/Tiny-Q4_K_M.gguf")).toBe(true);
  });

  test("a tag picks a quantization (any case) or a file; huggingface.co is the same hub", async () => {
    const store = freshStore();
    expect(await pull(store, "huggingface.co/llamux-test/Tiny-GGUF:q8_0")).toBe("hf.co/llamux-test/Tiny-GGUF:q8_0");
    expect(readFileSync(store.resolve("hf.co/llamux-test/Tiny-GGUF:Q8_0")!.modelPath)).toEqual(Buffer.from(files.Q8_0!));
    await pull(store, "hf.co/llamux-test/Tiny-GGUF:Tiny-Q2_K.gguf");
    expect(readFileSync(store.resolve("hf.co/llamux-test/Tiny-GGUF:Tiny-Q2_K.gguf")!.modelPath)).toEqual(Buffer.from(files.Q2_K!));
    await pull(store, "hf.co/llamux-test/NoDefault-GGUF");
    expect(readFileSync(store.resolve("hf.co/llamux-test/NoDefault-GGUF")!.modelPath)).toEqual(Buffer.from(files.other!));
  });

  test("an unknown tag lists the available ones", async () => {
    const store = freshStore();
    await expect(pull(store, "hf.co/llamux-test/Tiny-GGUF:Q5_K_S")).rejects.toThrow(
      'Cannot pull "hf.co/llamux-test/Tiny-GGUF:Q5_K_S": "llamux-test/Tiny-GGUF" has no GGUF file for tag "Q5_K_S"; available tags: Q4_K_M, Q8_0, Q2_K (or a file name)',
    );
  });

  test("a missing repository is a 404 and a gated one asks for HF_TOKEN", async () => {
    const store = freshStore();
    await expect(pull(store, "hf.co/llamux-test/Missing-GGUF")).rejects.toThrow('Cannot find "llamux-test/Missing-GGUF" on the Hugging Face hub (404)');
    await expect(pull(store, "hf.co/llamux-test/Gated-GGUF")).rejects.toThrow("(401): the repository does not exist, or it is private or gated; set HF_TOKEN");
    await expect(pull(store, "hf.co/llamux-test/Gated-GGUF", { hub: { endpoint: hub.url, token: "hf_wrong" } })).rejects.toThrow("(403): access is restricted");
    await pull(store, "hf.co/llamux-test/Gated-GGUF", { hub: { endpoint: hub.url, token: "hf_secret" } });
    expect(store.list().map((m) => m.name)).toEqual(["hf.co/llamux-test/Gated-GGUF:latest"]);
    const downloads = hub.requests.filter((r) => r.path.includes("gated-Q4_K_M.gguf"));
    expect(downloads.every((r) => r.authorization === "Bearer hf_secret")).toBe(true);
    expect(hub.requests.filter((r) => r.server === "cdn").every((r) => r.authorization === undefined)).toBe(true);
  });

  test("a dropped connection is resumed with a range request", async () => {
    const store = freshStore();
    const half = files.Q8_0!.byteLength >> 1;
    hub.dropDownloads("llamux-test/Tiny-GGUF", "Tiny-Q8_0.gguf", half);
    const before = hub.requests.length;
    await pull(store, "hf.co/llamux-test/Tiny-GGUF:Q8_0");
    expect(readFileSync(store.resolve("hf.co/llamux-test/Tiny-GGUF:Q8_0")!.modelPath)).toEqual(Buffer.from(files.Q8_0!));
    const ranges = hub.requests.slice(before).filter((r) => r.server === "cdn" && r.path === `/${sha(files.Q8_0!)}`).map((r) => r.range);
    expect(ranges[0]).toBeUndefined();
    expect(ranges[1]).toMatch(/^bytes=\d+-$/);
    expect(Number(/\d+/.exec(ranges[1]!)![0])).toBeGreaterThan(0);
  });

  test("a pull that gives up leaves a partial file that the next pull resumes", async () => {
    const store = freshStore();
    const third = Math.floor(files.Q2_K!.byteLength / 3);
    hub.dropDownloads("llamux-test/Tiny-GGUF", "Tiny-Q2_K.gguf", third, 2);
    await expect(pull(store, "hf.co/llamux-test/Tiny-GGUF:Q2_K", { retries: 1 })).rejects.toThrow(/interrupted after \d+ of \d+ bytes .*; pull again to resume/);
    expect(store.list()).toEqual([]);
    const partial = readdirSync(store.blobsDir).find((f) => f.endsWith("-partial"));
    expect(partial).toBe(`sha256-${sha(files.Q2_K!)}-partial`);
    const before = hub.requests.length;
    await pull(store, "hf.co/llamux-test/Tiny-GGUF:Q2_K");
    const ranges = hub.requests.slice(before).filter((r) => r.server === "cdn").map((r) => r.range);
    expect(ranges[0]).toMatch(/^bytes=[1-9]\d*-$/);
    expect(readFileSync(store.resolve("hf.co/llamux-test/Tiny-GGUF:Q2_K")!.modelPath)).toEqual(Buffer.from(files.Q2_K!));
    expect(readdirSync(store.blobsDir).filter((f) => f.includes("partial"))).toEqual([]);
  });

  test("a checksum mismatch stores no blob and no manifest", async () => {
    const store = freshStore();
    hub.corrupt("llamux-test/Tiny-GGUF", "Tiny-Q8_0.gguf");
    try {
      await expect(pull(store, "hf.co/llamux-test/Tiny-GGUF:Q8_0")).rejects.toThrow(`digest mismatch, expected "sha256:${sha(files.Q8_0!)}"`);
    } finally {
      hub.corrupt("llamux-test/Tiny-GGUF", "Tiny-Q8_0.gguf", false);
    }
    expect(store.list()).toEqual([]);
    expect(existsSync(store.blobsDir) ? readdirSync(store.blobsDir).filter((f) => !f.endsWith(".lock")) : []).toEqual([]);
  });

  test("a file that is not a GGUF is refused before it is stored", async () => {
    const store = freshStore();
    await expect(pull(store, "hf.co/llamux-test/NotGguf-GGUF")).rejects.toThrow('"llamux-test/NotGguf-GGUF/broken-Q4_K_M.gguf" is not a usable GGUF file: bad magic');
    expect(store.list()).toEqual([]);
    expect(readdirSync(store.blobsDir)).toEqual([]);
  });

  test("a pull of a model already stored downloads nothing", async () => {
    const store = freshStore();
    await pull(store, "hf.co/llamux-test/Tiny-GGUF:Q8_0");
    const before = hub.requests.filter((r) => r.server === "cdn").length;
    const events: PullProgress[] = [];
    await pull(store, "hf.co/llamux-test/Tiny-GGUF:Q8_0", { onProgress: (e) => events.push(e) });
    expect(hub.requests.filter((r) => r.server === "cdn").length).toBe(before);
    expect(events.filter((e) => e.digest).every((e) => e.completed === e.total)).toBe(true);
  });

  test("concurrent pulls of one model share the download", async () => {
    const store = freshStore();
    const before = hub.requests.length;
    await Promise.all([pull(store, "hf.co/llamux-test/Tiny-GGUF:Q2_K"), pull(store, "hf.co/llamux-test/Tiny-GGUF:q2_k")]);
    expect(hub.requests.slice(before).filter((r) => r.server === "cdn" && r.path === `/${sha(files.Q2_K!)}`).length).toBe(1);
    expect(store.list().length).toBe(1);
    expect(readFileSync(store.resolve("hf.co/llamux-test/Tiny-GGUF:Q2_K")!.modelPath)).toEqual(Buffer.from(files.Q2_K!));
  });
});
