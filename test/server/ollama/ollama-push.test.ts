// POST /api/push on profile a through the official `ollama` client's push(): a model pulled from one
// registry double is copied to a name on a second (named by host, over http with `insecure`) and pushed
// there with Ollama's progress lines; the second registry wants tokens signed with the registry key.
// A server started without --allow-push refuses.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ollama } from "ollama";
import { PUSH_OFF } from "../../../src/server/ollama/push.ts";
import { loadRegistryKey } from "../../../src/store/registry/registry-key.ts";
import { startRegistryServer, type RegistryServer } from "../../fixtures/registry-server.ts";
import { tinyGguf } from "../../fixtures/tiny-gguf.ts";
import { startServer, type RunningServer } from "../serve-fixture.ts";

let dir: string;
let source: RegistryServer;
let target: RegistryServer;
let server: RunningServer;
let closed: RunningServer;
let ollama: Ollama;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "llamux-ollama-push-"));
  source = await startRegistryServer([{
    name: "library/tiny:latest",
    layers: [
      { mediaType: "application/vnd.ollama.image.model", content: await tinyGguf("push model", { padBytes: 256 << 10 }) },
      { mediaType: "application/vnd.ollama.image.template", content: new TextEncoder().encode("{{ .Prompt }}") },
    ],
  }]);
  target = await startRegistryServer([], { tokenRequired: true, signedTokens: true });
  const env = { OLLAMA_MODELS: join(dir, "models"), LLAMUX_MODELS: "", OLLAMA_REGISTRY: source.url, LLAMUX_REGISTRY_KEY: join(dir, "id_ed25519") };
  [server, closed] = await Promise.all([
    startServer(["--profile", "a", "--allow-push"], env),
    startServer(["--profile", "a"], { ...env, OLLAMA_MODELS: join(dir, "other-models") }),
  ]);
  ollama = new Ollama({ host: server.baseUrl });
  await ollama.pull({ model: "tiny" });
}, 120_000);

afterAll(async () => {
  await Promise.all([server?.stop(), closed?.stop(), source?.stop(), target?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

describe("ollama.push()", () => {
  test("streams retrieving manifest, pushing <digest> with byte counts, pushing manifest, success", async () => {
    const name = `${target.host}/alice/tiny:v1`;
    await ollama.copy({ source: "tiny", destination: name });
    const lines = [];
    for await (const line of await ollama.push({ model: name, insecure: true, stream: true })) lines.push(line);
    const statuses = [...new Set(lines.map((l) => l.status))];
    const shown = await ollama.show({ model: name });
    expect(statuses[0]).toBe("retrieving manifest");
    expect(statuses.slice(-2)).toEqual(["pushing manifest", "success"]);
    const blobs = lines.filter((l) => l.digest);
    expect(new Set(blobs.map((l) => l.digest)).size).toBe(3); // model, template, config
    for (const line of blobs) {
      expect(line.status).toBe(`pushing ${line.digest.slice(7, 19)}`);
      expect(line.total).toBeGreaterThan(0);
    }
    const model = blobs.filter((l) => l.total > 256 << 10);
    expect(model.at(-1)!.completed).toBe(model.at(-1)!.total);
    // The registry holds the manifest as stored and every blob it names.
    const manifest = JSON.parse(target.manifestOf("alice/tiny:v1")!) as { layers: Array<{ digest: string; size: number }>; config: { digest: string } };
    for (const layer of manifest.layers) expect(target.blob(layer.digest)?.byteLength).toBe(layer.size);
    expect(target.blob(manifest.config.digest)).toBeDefined();
    expect(shown.template).toBe("{{ .Prompt }}");
    // Tokens came from the realm against a signature of the server's registry key.
    expect(target.signers).toContain(loadRegistryKey(join(dir, "id_ed25519"), { create: false })!.publicKey);
  });

  test("stream: false answers the last line; the blobs are there already, so only the manifest goes", async () => {
    const name = `${target.host}/alice/tiny:v2`;
    await ollama.copy({ source: "tiny", destination: name });
    const before = target.requests.length;
    expect(await ollama.push({ model: name, insecure: true })).toEqual({ status: "success" } as never);
    expect(target.requests.slice(before).some((r) => r.method === "PATCH")).toBe(false);
    expect(target.manifestOf("alice/tiny:v2")).toBeDefined();
  });

  test("without insecure a host's registry is https: an error line, nothing stored there", async () => {
    const name = `${target.host}/alice/tiny:v3`;
    await ollama.copy({ source: "tiny", destination: name });
    const lines: Array<{ status?: string; error?: string }> = [];
    const error = await (async () => {
      for await (const line of await ollama.push({ model: name, stream: true })) lines.push(line);
    })().then(() => undefined, (e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect(target.manifestOf("alice/tiny:v3")).toBeUndefined();
  });

  test("a model that is not stored is a 404 in Ollama's shape; no name is a 400", async () => {
    const missing = await ollama.push({ model: `${target.host}/alice/absent` }).then(() => undefined, (e: { status_code: number; error: string }) => e);
    expect(missing?.status_code).toBe(404);
    expect(missing?.error).toBe(`model '${target.host}/alice/absent' not found`);
    const response = await fetch(`${server.baseUrl}/api/push`, { method: "POST", body: "{}" });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: "model is required" });
  });

  test("a server started without --allow-push refuses with a 403 that says how to allow it", async () => {
    const refused = await new Ollama({ host: closed.baseUrl }).push({ model: "alice/tiny:v1" }).then(() => undefined, (e: { status_code: number; error: string }) => e);
    expect(refused?.status_code).toBe(403);
    expect(refused?.error).toBe(PUSH_OFF);
    expect(readFileSync(join(dir, "id_ed25519"), "utf8")).toStartWith("-----BEGIN OPENSSH PRIVATE KEY-----");
  });
});
