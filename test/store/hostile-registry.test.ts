// Pulls from a registry and a hub that lie (test/fixtures/registry-server.ts, hub-server.ts): redirects
// to an internal service, error pages with secrets, layers past their declared size, manifests without
// end, answers that never come. Each pull must fail in words, bounded in time, memory and disk.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bodyExcerpt } from "../../src/store/http.ts";
import { MAX_MANIFEST_BYTES, ModelStore } from "../../src/store/model-store.ts";
import { type PullOptions, pullModel } from "../../src/store/pull.ts";
import { type HubServer, startHubServer } from "../fixtures/hub-server.ts";
import { type InternalService, type RegistryServer, startInternalService, startRegistryServer } from "../fixtures/registry-server.ts";
import { tinyGguf } from "../fixtures/tiny-gguf.ts";

const SECRET = "internal-secret-7f3a";
const HUB_REPO = "llamux-test/Hostile-GGUF";
const HUB_FILE = "Hostile-Q4_K_M.gguf";
const dir = mkdtempSync(join(tmpdir(), "llamux-hostile-registry-"));
let registry: RegistryServer;
let hub: HubServer;
let internal: InternalService;
let stores = 0;
const freshStore = () => new ModelStore(join(dir, `store-${++stores}`));
const options = (): PullOptions => ({ registry: registry.url, hub: { endpoint: hub.url }, retries: 2 });
const failure = (promise: Promise<unknown>) => promise.then(() => { throw new Error("the pull succeeded"); }, (error: Error) => error.message);
const partialFiles = (store: ModelStore) => readdirSync(store.blobsDir).filter((name) => name.includes("partial"));

/** Runs `fn` with LLAMUX_PULL_TIMEOUT set to `seconds`. */
async function withPullTimeout<T>(seconds: number, fn: () => Promise<T>): Promise<T> {
  const before = process.env.LLAMUX_PULL_TIMEOUT;
  process.env.LLAMUX_PULL_TIMEOUT = String(seconds);
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.LLAMUX_PULL_TIMEOUT;
    else process.env.LLAMUX_PULL_TIMEOUT = before;
  }
}

beforeAll(async () => {
  internal = await startInternalService(`${SECRET} `.repeat(1000));
  registry = await startRegistryServer([
    { name: "library/oversized:latest", layers: [{ mediaType: "application/vnd.ollama.image.model", content: await tinyGguf("oversized", { padBytes: 1 << 20 }) }] },
  ]);
  hub = await startHubServer({ [HUB_REPO]: { files: [{ path: HUB_FILE, content: await tinyGguf("hostile hub", { padBytes: 1 << 20 }) }] } });
});

afterAll(async () => {
  await Promise.all([registry?.stop(), hub?.stop(), internal?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

describe("redirects and error answers", () => {
  test("a manifest redirected to a private address is not followed, and its answer is not quoted", async () => {
    registry.misbehave("library/redirected:latest", { manifest: "redirect", location: `${internal.url}/admin` });
    const message = await failure(pullModel(freshStore(), "redirected", options()));
    expect(message).toContain(`Cannot follow a redirect to "${internal.url}"`);
    expect(message).toContain("127.0.0.2, a loopback, private or link-local address");
    expect(message).not.toContain(SECRET);
    expect(internal.requests).toEqual([]);
  });

  test("a hub download redirected to a private address is not followed", async () => {
    hub.redirect(HUB_REPO, HUB_FILE, `${internal.url}/metadata`);
    try {
      const store = freshStore();
      const message = await failure(pullModel(store, `hf.co/${HUB_REPO}`, options()));
      expect(message).toContain(`Cannot follow a redirect to "${internal.url}"`);
      expect(message).not.toContain("pull again"); // the same redirect would come again
      expect(message).not.toContain(SECRET);
      expect(internal.requests).toEqual([]);
      expect(store.list()).toEqual([]);
    } finally {
      hub.redirect(HUB_REPO, HUB_FILE, undefined);
    }
  });

  test("a redirect to the registry's own address is followed (its blobs come from /cdn on the same host)", async () => {
    const store = freshStore();
    registry.misbehave("library/oversized:latest", undefined);
    expect(await pullModel(store, "oversized", options())).toBe("oversized:latest");
  });

  test("an error answer is quoted as a short excerpt with no control characters", async () => {
    const body = `\x1b]0;retitled\x07${SECRET}\r\n\u2028${"x".repeat(10_000)}`;
    registry.misbehave("library/error-page:latest", { manifest: "error", status: 403, body });
    const message = await failure(pullModel(freshStore(), "error-page", options()));
    expect(message).toStartWith('Cannot pull "error-page": pull model manifest: 403: ]0;retitled internal-secret-7f3a xxx');
    expect(message).not.toMatch(/[\x00-\x1f\x7f\u2028]/);
    expect(message.length).toBeLessThan(300);
    expect(bodyExcerpt("a\tb\n\n c")).toBe("a b c");
  });
});

describe("sizes", () => {
  test("a layer that streams past its declared size is cut there, not retried, and leaves no partial file", async () => {
    const store = freshStore();
    registry.misbehave("library/oversized:latest", { layerExtraBytes: 64 << 20 });
    const message = await failure(pullModel(store, "oversized", options()));
    expect(message).toMatch(/the server sent more than the \d+ bytes declared for layer [0-9a-f]{12} of oversized:latest; nothing of it was kept/);
    const downloads = registry.requests.filter((r) => r.path.startsWith("/cdn/") && r.search.startsWith("?extra="));
    expect(downloads.length).toBe(1);
    expect(registry.bytesSent(downloads[0]!.path)).toBeLessThan(32 << 20);
    expect(partialFiles(store)).toEqual([]);
    expect(store.list()).toEqual([]);
    registry.misbehave("library/oversized:latest", undefined);
  });

  test("a hub file that streams past its listed size is cut there and leaves no partial file", async () => {
    const store = freshStore();
    const cdnRequests = () => hub.requests.filter((r) => r.server === "cdn").length;
    const before = cdnRequests();
    hub.oversize(HUB_REPO, HUB_FILE, 64 << 20);
    const message = await failure(pullModel(store, `hf.co/${HUB_REPO}`, options()));
    expect(message).toContain(`bytes declared for ${HUB_FILE}`);
    expect(hub.bytesSent(HUB_REPO, HUB_FILE)).toBeLessThan(32 << 20);
    expect(partialFiles(store)).toEqual([]);
    expect(cdnRequests() - before).toBe(1);
  });

  test("a manifest without end is refused at 4 MiB and nothing is stored", async () => {
    const store = freshStore();
    registry.misbehave("library/endless:latest", { manifest: "endless" });
    const message = await failure(pullModel(store, "endless", options()));
    expect(message).toContain(`the manifest from ${registry.url} is larger than ${MAX_MANIFEST_BYTES} bytes`);
    expect(registry.bytesSent("/v2/library/endless/manifests/latest")).toBeLessThan(32 << 20);
    expect(store.list()).toEqual([]);
  });

  test("the store neither writes nor reads a manifest over 4 MiB", async () => {
    const store = freshStore();
    const large = JSON.stringify({ schemaVersion: 2, mediaType: "x", config: {}, layers: [], pad: " ".repeat(MAX_MANIFEST_BYTES) });
    await expect(store.writeManifestBytes("too-large", large)).rejects.toThrow(`larger than ${MAX_MANIFEST_BYTES} bytes`);
    const path = join(store.manifestsDir, "registry.ollama.ai", "library", "too-large");
    mkdirSync(path, { recursive: true });
    writeFileSync(join(path, "latest"), large);
    expect(store.list()).toEqual([]);
    expect(store.find("too-large")).toBeUndefined();
  });

  test("listing the store parses a manifest once until the file changes", async () => {
    const store = freshStore();
    const manifest = { schemaVersion: 2 as const, mediaType: "x", config: { mediaType: "c", digest: `sha256:${"0".repeat(64)}`, size: 1 }, layers: [] };
    await store.writeManifest("listed", manifest);
    const first = store.list()[0];
    expect(store.list()[0]).toBe(first!);
    await store.writeManifest("listed", { ...manifest, mediaType: "y" });
    expect(store.list()[0]).not.toBe(first!);
    expect(store.list()[0]!.manifest.mediaType).toBe("y");
  });
});

// Without the limits these calls never end: each test has 10 s.
describe("time limits", () => {
  test("a registry that never answers the manifest fails the pull", async () => {
    registry.misbehave("library/silent:latest", { manifest: "hang" });
    const message = await withPullTimeout(0.5, () => failure(pullModel(freshStore(), "silent", options())));
    expect(message).toBe(`Cannot pull "silent": pull model manifest: ${registry.url} did not answer within 0.5 s`);
  }, 10_000);

  test("a hub that never answers fails the pull", async () => {
    hub.hang(HUB_REPO);
    try {
      const message = await withPullTimeout(0.5, () => failure(pullModel(freshStore(), `hf.co/${HUB_REPO}`, options())));
      expect(message).toContain(`${hub.url} did not answer within 0.5 s`);
    } finally {
      hub.hang(HUB_REPO, false);
    }
  }, 10_000);
});
