import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DigestMismatchError, type Manifest, ModelNotFoundError, ModelStore, layerMediaType, storeRoot } from "../../src/store/model-store.ts";
import { profiles } from "../../src/server/profiles/index.ts";

const dir = mkdtempSync(join(tmpdir(), "llamux-store-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const writer = join(import.meta.dir, "..", "fixtures", "store-writer.ts");
let stores = 0;
const freshStore = () => new ModelStore(join(dir, `store-${++stores}`));

const sha = (bytes: Uint8Array | string) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const text = (s: string) => new TextEncoder().encode(s);

/** Stores `layers` (media type -> content) plus a config blob and writes a manifest for them. */
async function storeModel(store: ModelStore, name: string, layers: Array<[string, string]>): Promise<Manifest> {
  const config = await store.importBlob(text(JSON.stringify({ model_format: "gguf", model_family: "llama" })));
  const manifest: Manifest = {
    schemaVersion: 2,
    mediaType: "application/vnd.docker.distribution.manifest.v2+json",
    config: { mediaType: "application/vnd.docker.container.image.v1+json", ...config },
    layers: [],
  };
  for (const [mediaType, content] of layers) manifest.layers.push({ mediaType, ...(await store.importBlob(text(content))) });
  await store.writeManifest(name, manifest);
  return manifest;
}

function blobFiles(store: ModelStore): string[] {
  return existsSync(store.blobsDir) ? readdirSync(store.blobsDir).sort() : [];
}

describe("blobs", () => {
  test("importBlob stores content under its sha256, once, from bytes, a stream or a file", async () => {
    const store = freshStore();
    const content = text("hello blob");
    const fromBytes = await store.importBlob(content);
    expect(fromBytes).toEqual({ digest: sha(content), size: content.byteLength });
    expect(store.blobPath(fromBytes.digest)).toBe(join(store.root, "blobs", `sha256-${sha(content).slice(7)}`));
    expect(readFileSync(store.blobPath(fromBytes.digest), "utf8")).toBe("hello blob");
    const fromStream = await store.importBlob(new Blob([content]).stream());
    const source = join(dir, "source.bin");
    writeFileSync(source, content);
    const fromFile = await store.importBlob(source);
    expect(fromStream).toEqual(fromBytes);
    expect(fromFile).toEqual(fromBytes);
    expect(existsSync(source)).toBe(true);
    expect(blobFiles(store)).toEqual([`sha256-${sha(content).slice(7)}`]);
  });

  test("importBlob with move renames the file into the store", async () => {
    const store = freshStore();
    const source = join(dir, "moved.bin");
    writeFileSync(source, "moved content");
    const blob = await store.importBlob(source, { move: true, expectedDigest: sha("moved content") });
    expect(existsSync(source)).toBe(false);
    expect(readFileSync(store.blobPath(blob.digest), "utf8")).toBe("moved content");
  });

  test("a digest mismatch stores nothing and says both digests", async () => {
    const store = freshStore();
    const wrong = sha("something else");
    const attempt = store.importBlob(text("actual"), { expectedDigest: wrong });
    await expect(attempt).rejects.toThrow(DigestMismatchError);
    await expect(attempt).rejects.toThrow(`digest mismatch, expected "${wrong}", got "${sha("actual")}"`);
    expect(blobFiles(store)).toEqual([]);
  });

  test("blobPath refuses anything but a sha256 digest", () => {
    const store = freshStore();
    expect(() => store.blobPath("sha256:../../etc/passwd")).toThrow("expected sha256:<64 hex digits>");
    expect(store.blobPath(`sha256-${"A".repeat(64)}`)).toEndWith(`sha256-${"a".repeat(64)}`);
  });

  test("concurrent writers of one blob (processes and promises) leave one complete blob", async () => {
    const store = freshStore();
    const sizeMb = 8;
    const children = Array.from({ length: 3 }, () => Bun.spawn([process.execPath, writer, "same-blob", store.root, String(sizeMb)], { stdout: "pipe", stderr: "pipe" }));
    const local = Array.from({ length: 2 }, () => store.importBlob(new Uint8Array(sizeMb << 20).fill(0xcd)));
    const outputs = await Promise.all(children.map(async (child) => {
      const out = await new Response(child.stdout).text();
      expect(await child.exited).toBe(0);
      return out.trim().split("\n").at(-1)!;
    }));
    const expected = sha(new Uint8Array(sizeMb << 20).fill(0xcd));
    for (const digest of [...outputs, ...(await Promise.all(local)).map((b) => b.digest)]) expect(digest).toBe(expected);
    expect(blobFiles(store)).toEqual([`sha256-${expected.slice(7)}`]);
    expect(sha(readFileSync(store.blobPath(expected)))).toBe(expected);
  });

  test("a writer killed midway leaves no blob, and its temporary file is cleaned up later", async () => {
    const store = freshStore();
    const child = Bun.spawn([process.execPath, writer, "blob", store.root, "200"], { stdout: "pipe" });
    const reader = child.stdout.getReader();
    await reader.read(); // "started": the first MiB is written
    await Bun.sleep(100);
    child.kill("SIGKILL");
    await child.exited;
    expect(blobFiles(store).filter((f) => f.startsWith("sha256-"))).toEqual([]);
    expect(blobFiles(store).length).toBe(1); // the dead writer's temporary file
    await store.importBlob(text("next"));
    expect(blobFiles(store)).toEqual([`sha256-${sha("next").slice(7)}`]);
    expect(store.list()).toEqual([]);
  });
});

describe("manifests", () => {
  test("a manifest writer killed at any moment leaves a readable manifest", async () => {
    const store = freshStore();
    for (const delay of [5, 20, 45]) {
      const child = Bun.spawn([process.execPath, writer, "manifests", store.root, "crash/test:latest"], { stdout: "pipe" });
      await child.stdout.getReader().read();
      await Bun.sleep(delay);
      child.kill("SIGKILL");
      await child.exited;
      const models = store.list();
      expect(models.map((m) => m.name)).toEqual(["crash/test:latest"]);
      expect([0, 500]).toContain(models[0]!.manifest.layers.length);
    }
    const leftovers = readdirSync(join(store.manifestsDir, "registry.ollama.ai", "crash", "test"));
    expect(leftovers).toContain("latest");
  });

  test("list shows names, ids (short sha256 of the manifest file), sizes and times, newest first", async () => {
    const store = freshStore();
    await storeModel(store, "first", [[layerMediaType.model, "weights one"]]);
    await Bun.sleep(20);
    const second = await storeModel(store, "hf.co/Org/Repo-GGUF:Q4_K_M", [[layerMediaType.model, "weights two"], [layerMediaType.projector, "proj"]]);
    const models = store.list();
    expect(models.map((m) => m.name)).toEqual(["hf.co/Org/Repo-GGUF:Q4_K_M", "first:latest"]);
    const manifestFile = join(store.manifestsDir, "hf.co", "Org", "Repo-GGUF", "Q4_K_M");
    const digest = sha(readFileSync(manifestFile)).slice(7);
    expect(models[0]!.digest).toBe(digest);
    expect(models[0]!.id).toBe(digest.slice(0, 12));
    expect(models[0]!.size).toBe(second.config.size + "weights two".length + "proj".length);
    expect(models[0]!.modifiedAt.getTime()).toBeGreaterThan(models[1]!.modifiedAt.getTime());
  });

  test("names match case-insensitively and keep the case they were stored with", async () => {
    const store = freshStore();
    await storeModel(store, "hf.co/Org/Repo:Q4_K_M", [[layerMediaType.model, "a"]]);
    expect(store.find("HF.CO/org/REPO:q4_k_m")?.name).toBe("hf.co/Org/Repo:Q4_K_M");
    expect(store.resolve("huggingface.co/org/repo:q4_k_m")?.name).toBe("hf.co/Org/Repo:Q4_K_M");
    await storeModel(store, "hf.co/org/repo:q4_k_m", [[layerMediaType.model, "b"]]);
    expect(store.list().map((m) => m.name)).toEqual(["hf.co/Org/Repo:Q4_K_M"]);
    expect(readFileSync(store.resolve("hf.co/org/repo:Q4_K_M")!.modelPath, "utf8")).toBe("b");
    expect(store.find("no such model")).toBeUndefined();
    expect(store.find("other:latest")).toBeUndefined();
  });

  test("resolve reads every layer: model, projector, adapters, template, system, params, messages, license", async () => {
    const store = freshStore();
    await storeModel(store, "full", [
      [layerMediaType.model, "GGUF model"],
      [layerMediaType.projector, "GGUF projector"],
      [layerMediaType.adapter, "lora one"],
      [layerMediaType.adapter, "lora two"],
      [layerMediaType.template, "{{ .System }} {{ .Prompt }}"],
      [layerMediaType.system, "You are terse."],
      [layerMediaType.params, JSON.stringify({ temperature: 0.7, stop: ["<|im_end|>", "<|endoftext|>"] })],
      [layerMediaType.messages, JSON.stringify([{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }])],
      [layerMediaType.license, "MIT"],
      [layerMediaType.license, "Apache-2.0"],
    ]);
    const model = store.resolve("full")!;
    expect(model.name).toBe("full:latest");
    expect(model.id).toBe(store.list()[0]!.id);
    expect(readFileSync(model.modelPath, "utf8")).toBe("GGUF model");
    expect(readFileSync(model.projectorPath!, "utf8")).toBe("GGUF projector");
    expect(model.adapterPaths.map((p) => readFileSync(p, "utf8"))).toEqual(["lora one", "lora two"]);
    expect(model.template).toBe("{{ .System }} {{ .Prompt }}");
    expect(model.system).toBe("You are terse.");
    expect(model.parameters).toEqual({ temperature: 0.7, stop: ["<|im_end|>", "<|endoftext|>"] });
    expect(model.messages).toEqual([{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }]);
    expect(model.license).toBe("MIT\nApache-2.0");
    expect(model.config.model_family).toBe("llama");
  });

  test("resolve of a model whose blob is missing says which blob", async () => {
    const store = freshStore();
    const manifest = await storeModel(store, "broken", [[layerMediaType.model, "gone"]]);
    rmSync(store.blobPath(manifest.layers[0]!.digest));
    expect(() => store.resolve("broken")).toThrow(`Cannot use model "broken:latest": blob ${manifest.layers[0]!.digest} is missing`);
  });

  test("a corrupt manifest is skipped by list and not found by resolve", async () => {
    const store = freshStore();
    await storeModel(store, "good", [[layerMediaType.model, "x"]]);
    const bad = join(store.manifestsDir, "registry.ollama.ai", "library", "bad");
    mkdirSync(bad, { recursive: true });
    writeFileSync(join(bad, "latest"), "{not json");
    expect(store.list().map((m) => m.name)).toEqual(["good:latest"]);
    expect(store.resolve("bad")).toBeUndefined();
  });

  test("writeManifest refuses an invalid name or manifest", async () => {
    const store = freshStore();
    const valid = await storeModel(store, "valid", [[layerMediaType.model, "x"]]);
    await expect(store.writeManifest("../escape", valid)).rejects.toThrow("Cannot parse model name");
    await expect(store.writeManifestBytes("ok", "{}")).rejects.toThrow('Cannot read manifest "ok": schemaVersion');
  });
});

describe("rm and cp", () => {
  test("remove deletes the manifest and only the blobs no other manifest references", async () => {
    const store = freshStore();
    await storeModel(store, "one", [[layerMediaType.model, "shared weights"], [layerMediaType.system, "one's system"]]);
    await storeModel(store, "two", [[layerMediaType.model, "shared weights"], [layerMediaType.system, "two's system"]]);
    const unrelated = await store.importBlob(text("a blob a create in progress just wrote"));
    const before = blobFiles(store).length;
    await store.remove("ONE");
    expect(store.list().map((m) => m.name)).toEqual(["two:latest"]);
    expect(blobFiles(store).length).toBe(before - 1);
    expect(store.hasBlob(sha("one's system"))).toBe(false);
    expect(store.hasBlob(sha("shared weights"))).toBe(true);
    await store.remove("two:latest");
    expect(blobFiles(store)).toEqual([`sha256-${unrelated.digest.slice(7)}`]);
    expect(readdirSync(store.manifestsDir)).toEqual([]);
    await expect(store.remove("two")).rejects.toThrow(ModelNotFoundError);
    await expect(store.remove("two")).rejects.toThrow("model 'two' not found");
  });

  test("copy gives the same manifest a second name with the same id", async () => {
    const store = freshStore();
    await storeModel(store, "source", [[layerMediaType.model, "weights"]]);
    await store.copy("Source", "hf.co/me/copy:v1");
    const [a, b] = [store.find("source")!, store.find("hf.co/me/copy:v1")!];
    expect(b.id).toBe(a.id);
    await store.remove("source");
    expect(readFileSync(store.resolve("hf.co/me/copy:v1")!.modelPath, "utf8")).toBe("weights");
    await expect(store.copy("missing", "x")).rejects.toThrow("model 'missing' not found");
  });
});

test("storeRoot: option, LLAMUX_MODELS, OLLAMA_MODELS where asked for (profile a), then ~/.llamux/models", () => {
  const saved = { LLAMUX_MODELS: process.env.LLAMUX_MODELS, OLLAMA_MODELS: process.env.OLLAMA_MODELS };
  try {
    delete process.env.LLAMUX_MODELS;
    process.env.OLLAMA_MODELS = "/ollama/models";
    expect(storeRoot({ ollamaModels: profiles.a.ollamaEnvironment })).toBe("/ollama/models");
    expect(storeRoot({ ollamaModels: profiles.b.ollamaEnvironment })).toEndWith(join(".llamux", "models"));
    expect(storeRoot({ ollamaModels: profiles.c.ollamaEnvironment })).toEndWith(join(".llamux", "models"));
    process.env.LLAMUX_MODELS = "/llamux/models";
    expect(storeRoot({ ollamaModels: true })).toBe("/llamux/models");
    expect(storeRoot({ root: "/explicit", ollamaModels: true })).toBe("/explicit");
    expect(ModelStore.open({ root: "/explicit" }).root).toBe("/explicit");
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
});
