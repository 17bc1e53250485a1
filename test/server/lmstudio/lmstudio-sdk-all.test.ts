// LM Studio's SDK against `llamux serve --profile all --api-key …`: profile c's sockets on port 1234 beside
// the other profiles, and the handshake with a key: LM Studio's token form "sk-lm-<id>:<passkey>" (the
// SDK's clientIdentifier and clientPasskey) and a plain key as the passkey are accepted, a wrong passkey
// is refused in the handshake. --profile all takes the profiles' own ports (11434, 8000, 1234); the test
// says so when one of them is taken rather than skipping.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LMStudioClient } from "@lmstudio/sdk";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { ensureModel } from "../../../scripts/gen-models.ts";
import { BERT_KEY, CHAT_KEY, portIsFree, quietLogger, RawSocket, type SdkStore, sdkStore } from "../lmstudio-sdk-fixture.ts";

const TOKEN_ID = "sk-lm-Ab12Cd34";
const TOKEN_PASSKEY = "Ef56Gh78Ij90Kl12Mn34";
const PLAIN_KEY = "plain-secret-key";
const PORTS = [11434, 8000, 1234];
const main = join(import.meta.dir, "..", "..", "..", "src", "main.ts");

let store: SdkStore;
let child: ReturnType<typeof Bun.spawn> | undefined;
let stderr = "";
const baseUrl = "ws://127.0.0.1:1234";

beforeAll(async () => {
  for (const port of PORTS) {
    if (!(await portIsFree(port))) throw new Error(`Port ${port} is in use: --profile all needs 11434, 8000 and 1234 free to run this test`);
  }
  store = await sdkStore();
  const served = await ensureModel("tiny-llama");
  child = Bun.spawn([process.execPath, main, "serve", served, "--served-model-name", "served-chat", "--profile", "all", "--ctx-size", "512",
    "--parallel", "1", "--sdk-port", "0", "--api-key", `${TOKEN_ID}:${TOKEN_PASSKEY}`, "--api-key", PLAIN_KEY], {
    env: { ...process.env, LLAMUX_LOG_LEVEL: "warn", LLAMUX_MODELS: store.storeDir, HF_ENDPOINT: store.hub.url },
    stdout: "ignore",
    stderr: "pipe",
  });
  void (async () => {
    for await (const chunk of child!.stderr as ReadableStream<Uint8Array>) stderr += new TextDecoder().decode(chunk);
  })();
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await fetch("http://127.0.0.1:1234/lmstudio-greeting");
      break;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`llamux serve --profile all did not start: ${stderr}`);
      await Bun.sleep(50);
    }
  }
}, 180_000);

afterAll(async () => {
  child?.kill("SIGTERM");
  await child?.exited;
  await store?.hub.stop();
  if (store) rmSync(store.dir, { recursive: true, force: true });
});

const tokenClient = () => new LMStudioClient({ baseUrl, clientIdentifier: TOKEN_ID, clientPasskey: TOKEN_PASSKEY, logger: quietLogger });

describe("--profile all with --api-key", () => {
  test("LM Studio's token form is accepted: models, JIT load, respond, embeddings", async () => {
    const client = tokenClient();
    const downloaded = (await client.system.listDownloadedModels()).map((m) => m.modelKey);
    expect(downloaded).toContain("served-chat");
    expect((await client.llm.listLoaded()).map((m) => m.identifier)).toContain("served-chat");
    const model = await client.llm.model(CHAT_KEY, { verbose: false });
    const result = await model.respond("Hi", { maxTokens: 3 });
    expect(result.stats.predictedTokensCount).toBeLessThanOrEqual(3);
    const embedder = await client.embedding.model(BERT_KEY, { verbose: false });
    expect((await embedder.embed("hello")).embedding.length).toBeGreaterThan(0);
  });

  test("a plain key is accepted as the passkey", async () => {
    const client = new LMStudioClient({ baseUrl, clientIdentifier: "any-client", clientPasskey: PLAIN_KEY, logger: quietLogger });
    expect((await client.llm.listLoaded()).length).toBeGreaterThan(0);
  });

  test("a wrong passkey is refused in the handshake", async () => {
    const client = new LMStudioClient({ baseUrl, clientIdentifier: TOKEN_ID, clientPasskey: "wrong-passkey-000000", logger: quietLogger });
    await expect(client.system.listDownloadedModels()).rejects.toThrow();
    const socket = await RawSocket.open(`${baseUrl}/llm`);
    socket.send({ authVersion: 1, clientIdentifier: TOKEN_ID, clientPasskey: "wrong-passkey-000000" });
    const answer = await socket.next();
    expect(answer.success).toBe(false);
    expect(answer.error).toMatch(/Invalid passkey/);
    expect((await socket.closing()).code).toBe(1008);
  });

  test("a guest (random identity, no key) is refused when a key is set", async () => {
    const guest = new LMStudioClient({ baseUrl, logger: quietLogger });
    await expect(guest.llm.listLoaded()).rejects.toThrow();
  });

  test("the other profiles still answer on their ports, and REST still needs the key", async () => {
    expect((await fetch("http://127.0.0.1:11434/api/version")).status).toBe(200);
    expect((await fetch("http://127.0.0.1:1234/api/v1/models")).status).toBe(401);
    const withKey = await fetch("http://127.0.0.1:1234/api/v1/models", { headers: { authorization: `Bearer ${PLAIN_KEY}` } });
    expect(withKey.status).toBe(200);
  });
});
