// Pushing a stored model to the registry double as `ollama push` does: blobs checked with HEAD, uploaded
// with POST + PATCH parts + PUT (or PUT to a storage redirect), the manifest last, tokens from a realm
// that checks Ollama's ed25519 signature, and `insecure` for a registry named by host.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ModelStore, layerMediaType, MANIFEST_MEDIA_TYPE, CONFIG_MEDIA_TYPE } from "../../src/store/model-store.ts";
import type { PullProgress } from "../../src/store/pull-progress.ts";
import { pushToRegistry } from "../../src/store/registry/registry-push.ts";
import { pullModel } from "../../src/store/pull.ts";
import { loadRegistryKey } from "../../src/store/registry/registry-key.ts";
import { startRegistryServer, type RegistryServer } from "../fixtures/registry-server.ts";
import { tinyGguf } from "../fixtures/tiny-gguf.ts";

let dir: string;
let store: ModelStore;
let registry: RegistryServer;
const keyPath = () => join(dir, "key", "id_ed25519");
let model: Uint8Array;
const template = new TextEncoder().encode("{{ .Prompt }}");
/** Parts of 64 KB, so the model blob goes in several. */
const smallParts = { parts: 16, min: 65_536, max: 65_536 };
const modelParts = () => Math.ceil(model.byteLength / 65_536);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "llamux-push-"));
  model = await tinyGguf("pushed model", { padBytes: 300_000 });
  store = new ModelStore(join(dir, "models"));
  const layers = [];
  for (const [mediaType, bytes] of [[layerMediaType.model, model], [layerMediaType.template, template]] as const) {
    const blob = await store.importBlob(bytes);
    layers.push({ mediaType, digest: blob.digest, size: blob.size });
  }
  const config = await store.importBlob(new TextEncoder().encode(JSON.stringify({ model_format: "gguf", model_family: "llama" })));
  await store.writeManifest("alice/tiny:v1", { schemaVersion: 2, mediaType: MANIFEST_MEDIA_TYPE, config: { mediaType: CONFIG_MEDIA_TYPE, digest: config.digest, size: config.size }, layers });
  registry = await startRegistryServer([], { tokenRequired: true, signedTokens: true });
});

afterAll(async () => {
  await registry?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function push(name: string, target: RegistryServer, options: { insecure?: boolean; partSizes?: typeof smallParts } = {}): Promise<PullProgress[]> {
  const events: PullProgress[] = [];
  await pushToRegistry(store, name, { registry: target.url, keyPath: keyPath(), onProgress: (e) => events.push(e), ...options });
  return events;
}

describe("pushToRegistry", () => {
  test("uploads every blob in parts, then the manifest; the registry holds the model byte for byte", async () => {
    const events = await push("alice/tiny:v1", registry, { partSizes: smallParts });
    const statuses = [...new Set(events.map((e) => e.status))];
    const stored = store.find("alice/tiny:v1")!;
    const blobs = [...stored.manifest.layers, stored.manifest.config];
    expect(statuses).toEqual(["retrieving manifest", ...blobs.map((b) => `pushing ${b.digest.slice(7, 19)}`), "pushing manifest", "success"]);
    for (const blob of blobs) {
      const last = events.filter((e) => e.digest === blob.digest).at(-1)!;
      expect(last).toEqual({ status: `pushing ${blob.digest.slice(7, 19)}`, digest: blob.digest, total: blob.size, completed: blob.size });
      expect(registry.blob(blob.digest)).toEqual(new Uint8Array(readFileSync(store.blobPath(blob.digest))));
    }
    expect(registry.manifestOf("alice/tiny:v1")).toBe(readFileSync(join(store.root, "manifests", "registry.ollama.ai", "alice", "tiny", "v1"), "utf8"));
    // One POST per blob, a PATCH per 64 KB part (one each for the small blobs), a committing PUT per blob, the manifest last.
    const pushed = registry.requests.filter((r) => r.method !== "GET" && r.authorization?.startsWith("Bearer "));
    expect(pushed.filter((r) => r.method === "POST")).toHaveLength(3);
    expect(modelParts()).toBeGreaterThanOrEqual(5);
    expect(pushed.filter((r) => r.method === "PATCH")).toHaveLength(modelParts() + 1 + 1);
    expect(pushed.at(-1)).toMatchObject({ method: "PUT", path: "/v2/alice/tiny/manifests/v1" });
  });

  test("the token request is signed with the registry key, created in OpenSSH's format on first use", () => {
    expect(statSync(keyPath()).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyPath(), "utf8")).toStartWith("-----BEGIN OPENSSH PRIVATE KEY-----");
    expect(registry.signers).toContain(loadRegistryKey(keyPath(), { create: false })!.publicKey);
  });

  test("a pull from that registry signs its token request with the same key and gets the model back", async () => {
    const saved = process.env.LLAMUX_REGISTRY_KEY;
    process.env.LLAMUX_REGISTRY_KEY = keyPath();
    const signed = registry.signers.length;
    try {
      const elsewhere = new ModelStore(join(dir, "pulled"));
      await pullModel(elsewhere, "alice/tiny:v1", { registry: registry.url });
      expect(elsewhere.manifestBytes("alice/tiny:v1")).toEqual(store.manifestBytes("alice/tiny:v1")!);
      expect(registry.signers.length).toBeGreaterThan(signed);
    } finally {
      if (saved === undefined) delete process.env.LLAMUX_REGISTRY_KEY;
      else process.env.LLAMUX_REGISTRY_KEY = saved;
    }
  });

  test("a second push finds every blob there (HEAD) and sends only the manifest", async () => {
    const before = registry.requests.length;
    const events = await push("alice/tiny:v1", registry);
    const methods = registry.requests.slice(before).map((r) => r.method);
    expect(methods).not.toContain("POST");
    expect(methods).not.toContain("PATCH");
    expect(methods.filter((m) => m === "PUT")).toHaveLength(1);
    expect(events.filter((e) => e.digest).every((e) => e.completed === e.total)).toBe(true);
  });

  test("a layer that names the model it came from is mounted from that repository, not uploaded", async () => {
    const source = store.find("alice/tiny:v1")!.manifest;
    await store.writeManifest("bob/tiny:v1", { ...source, layers: source.layers.map((layer) => ({ ...layer, from: "alice/tiny:v1" })) });
    const before = registry.requests.length;
    await push("bob/tiny:v1", registry);
    const requests = registry.requests.slice(before);
    const mounts = requests.filter((r) => r.method === "POST" && r.search.includes("mount="));
    expect(mounts).toHaveLength(source.layers.length);
    for (const mount of mounts) expect(new URLSearchParams(mount.search).get("from")).toBe("alice/tiny");
    // Only the config blob, which names no source, is uploaded.
    expect(requests.filter((r) => r.method === "PATCH")).toHaveLength(1);
    expect(registry.manifestOf("bob/tiny:v1")).toBeDefined();
  });

  test("a registry that redirects parts gets each part by PUT at the redirect", async () => {
    const redirecting = await startRegistryServer([], { redirectUploads: true });
    try {
      await push("alice/tiny:v1", redirecting, { partSizes: smallParts });
      const stored = store.find("alice/tiny:v1")!;
      for (const blob of [...stored.manifest.layers, stored.manifest.config]) expect(redirecting.blob(blob.digest)?.byteLength).toBe(blob.size);
      expect(redirecting.requests.filter((r) => r.method === "PUT" && r.path.startsWith("/storage/"))).toHaveLength(modelParts() + 1 + 1);
      expect(redirecting.manifestOf("alice/tiny:v1")).toBeDefined();
    } finally {
      await redirecting.stop();
    }
  });

  test("a registry named by host takes http only with insecure", async () => {
    await store.copy("alice/tiny:v1", `${registry.host}/alice/tiny:v2`);
    const refused = await push(`${registry.host}/alice/tiny:v2`, registry).then(() => undefined, (e: Error) => e);
    expect(refused).toBeInstanceOf(Error);
    expect(registry.manifestOf("alice/tiny:v2")).toBeUndefined();
    await push(`${registry.host}/alice/tiny:v2`, registry, { insecure: true });
    expect(registry.manifestOf("alice/tiny:v2")).toBeDefined();
    const plain = await push(`http://${registry.host}/alice/tiny:v2`, registry).then(() => undefined, (e: Error) => e);
    expect(plain?.message).toBe("insecure protocol http");
  });

  test("a model that is not stored, and a key file that is not a key, are errors that say so", async () => {
    const events: PullProgress[] = [];
    const missing = await pushToRegistry(store, "alice/absent", { registry: registry.url, keyPath: keyPath(), onProgress: (e) => events.push(e) }).then(() => undefined, (e: Error) => e);
    expect(missing?.message).toBe("model 'alice/absent' not found");
    expect(events.map((e) => e.status)).toEqual(["retrieving manifest", "couldn't retrieve manifest"]);
    const garbage = join(dir, "garbage-key");
    await Bun.write(garbage, "not a key");
    const unsigned = await pushToRegistry(store, "alice/tiny:v1", { registry: (await startFresh()).url, keyPath: garbage }).then(() => undefined, (e: Error) => e);
    expect(unsigned?.message).toContain(`Cannot read registry key "${garbage}"`);
  });
});

const fresh: RegistryServer[] = [];
async function startFresh(): Promise<RegistryServer> {
  const server = await startRegistryServer([], { tokenRequired: true, signedTokens: true });
  fresh.push(server);
  return server;
}
afterAll(async () => {
  for (const server of fresh) await server.stop();
});
