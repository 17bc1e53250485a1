// LM Studio's own SDK (@lmstudio/sdk 1.5.0) against a real `llamux serve --profile c` over WebSocket:
// discovery without baseUrl (port 41343), the store's models, JIT loading, respond (streamed and not,
// with limits, stop strings and a zod schema), act with a forced tool call, complete, tokenize,
// embeddings, cancel mid-stream, unload, the same answers as the REST API `lms` reads, and malformed
// frames over a raw socket.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LMStudioClient, tool } from "@lmstudio/sdk";
import { rmSync } from "node:fs";
import { z as z3 } from "zod/v3";
import { ensureModel } from "../../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "../serve-fixture.ts";
import { BERT_KEY, CHAT_KEY, portIsFree, quietLogger, RawSocket, type SdkStore, sdkStore } from "../lmstudio-sdk-fixture.ts";

const DISCOVERY_PORT = 41343;
let store: SdkStore;
let server: RunningServer;
let client: LMStudioClient;
let discoveryWasFree = false;

const wsUrl = () => server.baseUrl.replace("http://", "ws://");
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const rest = async (path: string): Promise<Json> => (await (await fetch(`${server.baseUrl}${path}`)).json()) as Json;

beforeAll(async () => {
  store = await sdkStore();
  discoveryWasFree = await portIsFree(DISCOVERY_PORT);
  const served = await ensureModel("tiny-llama");
  server = await startServer([served, "--served-model-name", "served-chat", "--profile", "c", "--ctx-size", "512", "--parallel", "2", "--sdk-port", String(DISCOVERY_PORT)], {
    LLAMUX_MODELS: store.storeDir, HF_ENDPOINT: store.hub.url,
  });
  client = new LMStudioClient({ baseUrl: wsUrl(), logger: quietLogger });
}, 180_000);

afterAll(async () => {
  await server?.stop();
  await store?.hub.stop();
  if (store) rmSync(store.dir, { recursive: true, force: true });
});

describe("discovery and the store", () => {
  test("new LMStudioClient() with no arguments finds llamux on 127.0.0.1:41343", async () => {
    if (!discoveryWasFree) throw new Error(`Port ${DISCOVERY_PORT} was in use before the test started (LM Studio or another llamux?): stop it to run this test`);
    const greeting = await fetch(`http://127.0.0.1:${DISCOVERY_PORT}/lmstudio-greeting`);
    expect(((await greeting.json()) as Json).lmstudio).toBe(true);
    // Only the greeting and the SDK sockets are served there.
    expect((await fetch(`http://127.0.0.1:${DISCOVERY_PORT}/v1/models`)).status).toBe(404);
    const discovered = new LMStudioClient({ logger: quietLogger });
    const models = await discovered.system.listDownloadedModels();
    expect(models.map((m) => m.modelKey)).toContain("served-chat");
  });

  test("system.listDownloadedModels lists the served and stored models in LM Studio's shape", async () => {
    const models = await client.system.listDownloadedModels();
    const keys = models.map((m) => m.modelKey);
    expect(keys).toContain("served-chat");
    expect(keys.some((k) => k.includes("Tiny-Chat-GGUF"))).toBe(true);
    const bert = models.find((m) => m.modelKey.includes("Tiny-Bert-GGUF"))!;
    expect(bert.type).toBe("embedding");
    const chat = models.find((m) => m.modelKey === "served-chat")!;
    expect(chat).toMatchObject({ type: "llm", format: "gguf", architecture: "llama", trainedForToolUse: true, vision: false });
    expect(chat.sizeBytes).toBeGreaterThan(0);
    expect(chat.maxContextLength).toBeGreaterThan(0);
    // The same keys as GET /api/v1/models, which `lms ls` prints.
    expect(new Set(keys)).toEqual(new Set(((await rest("/api/v1/models")).models as Json[]).map((m) => m.key)));
  });

  test("system version", async () => {
    const version = await client.system.getLMStudioVersion();
    expect(version.version).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe("models", () => {
  test("the model named on serve is reported as loaded, as by /api/v1/models (what `lms ps` reads)", async () => {
    const loaded = await client.llm.listLoaded();
    expect(loaded.map((m) => m.identifier)).toContain("served-chat");
    const restLoaded = ((await rest("/api/v1/models")).models as Json[]).flatMap((m) => (m.loaded_instances as Json[]).map((i) => i.id));
    expect(restLoaded).toContain("served-chat");
  });

  test("llm.model() gets a loaded model; its context length is the server's", async () => {
    const model = await client.llm.model();
    expect(model.identifier).toBe("served-chat");
    expect(await model.getContextLength()).toBe(512);
  });

  test("llm.model(key) loads a stored model just in time; listLoaded then shows it", async () => {
    const model = await client.llm.model(CHAT_KEY, { verbose: false });
    expect(model.modelKey).toContain("Tiny-Chat-GGUF");
    const ids = (await client.llm.listLoaded()).map((m) => m.identifier);
    expect(ids).toContain(model.identifier);
    const info = await model.getModelInfo();
    expect(info.type).toBe("llm");
  });
});

describe("respond", () => {
  test("not streamed, with maxTokens and temperature", async () => {
    const model = await client.llm.model();
    const result = await model.respond([{ role: "user", content: "Hello" }], { maxTokens: 5, temperature: 0 });
    expect(typeof result.content).toBe("string");
    expect(result.stats.predictedTokensCount).toBeLessThanOrEqual(5);
    expect(result.stats.promptTokensCount).toBeGreaterThan(0);
    expect(["maxPredictedTokensReached", "eosFound"]).toContain(result.stats.stopReason);
    expect(result.modelInfo.identifier).toBe(model.identifier);
  });

  test("streamed: fragments add up to the result", async () => {
    const model = await client.llm.model();
    const prediction = model.respond("Tell me a story", { maxTokens: 8, temperature: 0.7 });
    let streamed = "";
    let fragments = 0;
    for await (const fragment of prediction) {
      streamed += fragment.content;
      fragments++;
    }
    const result = await prediction.result();
    expect(fragments).toBeGreaterThan(0);
    expect(streamed).toBe(result.content);
  });

  test("stopStrings end the answer at the stop string", async () => {
    const model = await client.llm.model();
    // A grammar makes the text predictable: "ab" repeated; the stop string "b" ends it after the first "a".
    const result = await model.respond("Go", { maxTokens: 20, stopStrings: ["b"], structured: { type: "gbnf", gbnfGrammar: 'root ::= "ab" root' } });
    expect(result.content).toBe("a");
    expect(result.stats.stopReason).toBe("stopStringFound");
  });

  test("structured output with a zod schema gives valid, parsed JSON", async () => {
    const model = await client.llm.model();
    // Closed choices keep the JSON short: random weights must still finish it within maxTokens.
    const schema = z3.object({ mood: z3.enum(["happy", "sad"]), tall: z3.boolean() });
    const result = await model.respond("Describe a person", { structured: schema, maxTokens: 60 });
    expect(schema.safeParse(result.parsed).success).toBe(true);
  });

  test("cancel stops the prediction mid-stream", async () => {
    const model = await client.llm.model();
    // A grammar with no end: only the token limit or a cancel can stop it.
    const prediction = model.respond("Go", { maxTokens: 400, structured: { type: "gbnf", gbnfGrammar: 'root ::= "x" root' } });
    let fragments = 0;
    for await (const _ of prediction) {
      if (++fragments === 3) await prediction.cancel();
    }
    const result = await prediction.result();
    expect(result.stats.stopReason).toBe("userStopped");
    expect(result.stats.predictedTokensCount!).toBeLessThan(400);
  });
});

describe("act, complete, tokens", () => {
  test("act() with a forced tool call runs the tool with arguments of its schema", async () => {
    const model = await client.llm.model();
    const calls: Array<{ city: string }> = [];
    const weather = tool({
      name: "get_weather",
      description: "Weather of a city",
      // A closed choice keeps the forced call short: random weights must finish it within maxTokens.
      // The longest call the grammar admits is 84 characters (`<tool_call>\n{"name": "get_weather",
      // "arguments": { "city" : "Paris" } }\n</tool_call>`), so 96 tokens end it whatever pieces random
      // weights spell it in (48 did not always: unseeded calls took 29-46 tokens, once more).
      parameters: { city: z3.enum(["Paris", "Rome"]) },
      implementation: ({ city }) => {
        calls.push({ city });
        return "sunny";
      },
    });
    // llamux's config key forces the call (act() has no option of its own for it); naming the tool
    // allows one call, so the grammar ends right after it.
    // The answer round after the call is random text: it is cancelled as it starts (the call is what is tested).
    const answerRound = new AbortController();
    const rounds: number[] = [];
    await model.act("What is the weather in Paris?", [weather], {
      maxPredictionRounds: 2, maxTokens: 96, raw: { fields: [{ key: "llamux.toolChoice", value: { name: "get_weather" } }] },
      signal: answerRound.signal,
      onRoundStart: (round) => {
        rounds.push(round);
        if (round === 1) answerRound.abort();
      },
    }).catch((error: Error) => {
      if (!answerRound.signal.aborted) throw error;
    });
    expect(rounds).toEqual([0, 1]);
    expect(calls.length).toBeGreaterThan(0);
    expect(["Paris", "Rome"]).toContain(calls[0]!.city);
  });

  test("complete() continues raw text", async () => {
    const model = await client.llm.model();
    const result = await model.complete("Once upon a time", { maxTokens: 4 });
    expect(result.stats.predictedTokensCount).toBeLessThanOrEqual(4);
    expect(result.stats.promptTokensCount).toBeLessThan(10); // no chat template around the text
  });

  test("tokenize and countTokens agree", async () => {
    const model = await client.llm.model();
    const tokens = await model.tokenize("Hello world, hello llamux");
    expect(tokens.length).toBeGreaterThan(2);
    expect(await model.countTokens("Hello world, hello llamux")).toBe(tokens.length);
  });

  test("applyPromptTemplate renders the model's template", async () => {
    const model = await client.llm.model();
    const formatted = await model.applyPromptTemplate([{ role: "user", content: "Hi there" }]);
    expect(formatted).toContain("<|im_start|>user\nHi there");
  });

  test("embedding.model(key).embed()", async () => {
    const model = await client.embedding.model(BERT_KEY, { verbose: false });
    const { embedding } = await model.embed("hello world");
    expect(embedding.length).toBeGreaterThan(0);
    expect(embedding.every((x) => Number.isFinite(x))).toBe(true);
    expect((await client.embedding.listLoaded()).map((m) => m.identifier)).toContain(model.identifier);
  });

  test("an embedding model is refused on /llm", async () => {
    await expect(client.llm.model(BERT_KEY, { verbose: false })).rejects.toThrow(/embedding/);
  });

  test("Auto-Evict: a model loaded just in time over the socket unloads the one loaded just in time before it", async () => {
    const chat = await client.llm.model(CHAT_KEY, { verbose: false });
    expect((await client.llm.listLoaded()).map((m) => m.identifier)).toContain(chat.identifier);
    // The SDK says what Auto-Evict unloads (the getOrLoad channel's unloadingOtherJITModel packet).
    const said: string[] = [];
    const listening = new LMStudioClient({ baseUrl: wsUrl(), logger: { ...quietLogger, info: (...parts: unknown[]) => void said.push(parts.join(" ")) } });
    const bert = await listening.embedding.model(BERT_KEY, { verbose: true });
    expect(said.join("\n")).toContain(`Unloading other JIT model ${chat.modelKey}`);
    expect((await client.llm.listLoaded()).map((m) => m.identifier)).not.toContain(chat.identifier);
    expect((await client.embedding.listLoaded()).map((m) => m.identifier)).toContain(bert.identifier);
    // The model named on serve stays.
    expect((await client.llm.listLoaded()).map((m) => m.identifier)).toContain("served-chat");
  });

  test("a ttl given to llm.model(key) unloads the model after that much idle time", async () => {
    const model = await client.llm.model(CHAT_KEY, { verbose: false, ttl: 1 });
    const deadline = Date.now() + 15_000;
    let ids = (await client.llm.listLoaded()).map((m) => m.identifier);
    while (ids.includes(model.identifier) && Date.now() < deadline) {
      await Bun.sleep(250);
      ids = (await client.llm.listLoaded()).map((m) => m.identifier);
    }
    expect(ids).not.toContain(model.identifier);
  });

  test("llm.load(key, {identifier}) loads an instance under that name, as /api/v1/models reports it", async () => {
    const model = await client.llm.load(CHAT_KEY, { identifier: "my-chat", verbose: false });
    expect(model.identifier).toBe("my-chat");
    expect((await client.llm.listLoaded()).map((m) => m.identifier)).toContain("my-chat");
    const restIds = ((await rest("/api/v1/models")).models as Json[]).flatMap((m) => (m.loaded_instances as Json[]).map((i) => i.id));
    expect(restIds).toContain("my-chat");
    await expect(client.llm.load(CHAT_KEY, { identifier: "my-chat", verbose: false })).rejects.toThrow(/already loaded/);
    await model.unload();
    expect((await client.llm.listLoaded()).map((m) => m.identifier)).not.toContain("my-chat");
  });

  test("unload() unloads the instance", async () => {
    const model = await client.llm.model(CHAT_KEY, { verbose: false });
    await model.unload();
    const ids = (await client.llm.listLoaded()).map((m) => m.identifier);
    expect(ids).not.toContain(model.identifier);
    expect(ids).toContain("served-chat");
  });
});

describe("raw frames", () => {
  async function authed(path = "/llm"): Promise<RawSocket> {
    const socket = await RawSocket.open(`${wsUrl()}${path}`);
    socket.send({ authVersion: 1, clientIdentifier: "raw-test", clientPasskey: "x" });
    expect(await socket.next()).toEqual({ success: true });
    return socket;
  }

  test("malformed frames end only their call; the socket and server go on", async () => {
    const socket = await authed();
    socket.send("{not json");
    expect((await socket.next()).type).toBe("communicationWarning");
    socket.send({ type: "noSuchType" });
    expect((await socket.next()).type).toBe("communicationWarning");
    socket.send({ type: "rpcCall", endpoint: "noSuchEndpoint", callId: 1 });
    const unknown = await socket.next();
    expect(unknown).toMatchObject({ type: "rpcError", callId: 1 });
    expect(unknown.error.title).toContain("noSuchEndpoint");
    socket.send({ type: "rpcCall", endpoint: "getModelInfo", callId: 2, parameter: { specifier: 42 } });
    expect(await socket.next()).toMatchObject({ type: "rpcError", callId: 2 });
    socket.send({ type: "rpcCall", endpoint: "listLoaded", callId: "three" });
    expect(await socket.next()).toMatchObject({ type: "communicationWarning" });
    // A channel id still in use: that channel ends with an error (its endless prediction stops).
    const endless = {
      modelSpecifier: { type: "instanceReference", instanceReference: "served-chat" },
      history: { messages: [{ role: "user", content: [{ type: "text", text: "Go" }] }] },
      predictionConfigStack: { layers: [{ layerName: "apiOverride", config: { fields: [
        { key: "llm.prediction.structured", value: { type: "gbnf", gbnfGrammar: 'root ::= "x" root' } },
        { key: "llm.prediction.maxPredictedTokens", value: { checked: true, value: 300 } },
      ] } }] },
    };
    socket.send({ type: "channelCreate", endpoint: "predict", channelId: 7, creationParameter: endless });
    await socket.next((f) => f.channelId === 7 && f.message?.type === "fragment");
    socket.send({ type: "channelCreate", endpoint: "predict", channelId: 7, creationParameter: endless });
    const reused = await socket.next((f) => f.channelId === 7 && f.type !== "channelSend");
    expect(reused).toMatchObject({ type: "channelError", channelId: 7 });
    expect(reused.error.title).toContain("already in use");
    socket.send({ type: "keepAlive" });
    expect(await socket.next((f) => f.type === "keepAliveAck")).toEqual({ type: "keepAliveAck" });
    socket.send({ type: "rpcCall", endpoint: "listLoaded", callId: 4 });
    const listed = await socket.next((f) => f.callId === 4);
    expect(listed.type).toBe("rpcResult");
    expect((listed.result as Json[]).map((m) => m.identifier)).toContain("served-chat");
    socket.close();
  });

  test("an RPC reusing the id of a call in flight: one rpcError for that id, never the first call's result after it", async () => {
    const socket = await authed();
    const specifier = { type: "instanceReference", instanceReference: "served-chat" };
    // A tokenize long enough to be in flight when the next frame arrives.
    const inputString = "the quick brown fox jumps over the lazy dog ".repeat(40_000);
    socket.send({ type: "rpcCall", endpoint: "tokenize", callId: 5, parameter: { specifier, inputString } });
    socket.send({ type: "rpcCall", endpoint: "listLoaded", callId: 5 });
    // The same work again under a new id: the engine answers in order, so once this one is answered,
    // the first call has ended too.
    socket.send({ type: "rpcCall", endpoint: "tokenize", callId: 6, parameter: { specifier, inputString } });
    // `next` looks at the frames each time one arrives: a set keeps each once.
    const answers = new Set<Json>();
    const after = await socket.next((frame) => {
      if (frame.callId === 5) answers.add(frame);
      return frame.callId === 6;
    }, 60_000);
    expect(after.type).toBe("rpcResult");
    expect([...answers]).toHaveLength(1);
    expect([...answers][0]).toMatchObject({ type: "rpcError", callId: 5, error: { title: expect.stringContaining("already in use") } });
    // The id is free again, and the socket goes on.
    socket.send({ type: "rpcCall", endpoint: "listLoaded", callId: 5 });
    expect(await socket.next((frame) => frame.callId === 5)).toMatchObject({ type: "rpcResult", callId: 5 });
    socket.close();
  }, 90_000);

  test("open calls per socket are bounded: the call past the limit is refused, the others go on", async () => {
    const socket = await authed("/system");
    for (let channelId = 0; channelId < 65; channelId++) socket.send({ type: "channelCreate", endpoint: "alive", channelId });
    const refused = await socket.next((f) => f.type === "channelError");
    expect(refused.channelId).toBe(64);
    expect(refused.error.title).toMatch(/Too many open calls/);
    socket.send({ type: "rpcCall", endpoint: "version", callId: 0 });
    expect(await socket.next()).toMatchObject({ type: "rpcError", callId: 0 }); // still full
    socket.close();
  });

  test("a frame over the size limit closes that socket only", async () => {
    const socket = await authed();
    socket.send({ type: "rpcCall", endpoint: "tokenize", callId: 0, parameter: { specifier: { type: "query", query: {} }, inputString: "x".repeat(17 * 1024 * 1024) } });
    expect((await socket.closing(20_000)).code).toBe(1009);
    const other = await authed("/system");
    other.send({ type: "rpcCall", endpoint: "version", callId: 0 });
    expect(await other.next()).toMatchObject({ type: "rpcResult", callId: 0 });
    other.close();
  });

  test("a namespace llamux does not serve authenticates, then refuses each call by name", async () => {
    const socket = await authed("/repository");
    socket.send({ type: "rpcCall", endpoint: "searchModels", callId: 0, parameter: { opts: {} } });
    const answer = await socket.next();
    expect(answer).toMatchObject({ type: "rpcError", callId: 0 });
    expect(answer.error.title).toMatch(/not served by llamux/);
    socket.send({ type: "channelCreate", endpoint: "downloadModel", channelId: 0, creationParameter: {} });
    expect(await socket.next()).toMatchObject({ type: "channelError", channelId: 0 });
    socket.close();
  });

  test("a bad authentication frame is refused and the socket closed", async () => {
    const socket = await RawSocket.open(`${wsUrl()}/system`);
    socket.send({ authVersion: 2, clientIdentifier: "a", clientPasskey: "b" });
    expect(await socket.next()).toMatchObject({ success: false });
    expect((await socket.closing()).code).toBe(1008);
  });

  test("a web page of a foreign origin cannot open a socket (no cross-site WebSocket hijacking)", async () => {
    const attempt = (origin: string) => new Promise<string>((resolve) => {
      const ws = new WebSocket(`${wsUrl()}/llm`, { headers: { Origin: origin } } as unknown as string[]);
      ws.addEventListener("open", () => (ws.close(), resolve("open")), { once: true });
      ws.addEventListener("error", () => resolve("refused"), { once: true });
    });
    expect(await attempt("https://evil.example")).toBe("refused");
    expect(await attempt("http://localhost:3000")).toBe("open"); // a local page, as for REST

  });

  test("a plain GET of a socket path says to use a WebSocket", async () => {
    const response = await fetch(`${server.baseUrl}/llm`);
    expect(response.status).toBe(426);
  });
});
