// What the engine's admission hears of a key (issue 45's fair turns): every chat request a route runs under
// a key carries its owner, weight and sequence cap, over whatever the request itself says, and each
// sequence's tokens count as it ends. The engine side is a scripted handle that records what it is asked;
// the admission planner's own tests cover what it does with these facts.
import { expect, test } from "bun:test";
import type { EngineHandle } from "../../src/engine/engine-handle.ts";
import type { EngineEvent, GenerateRequest, ModelInfo } from "../../src/engine/types.ts";
import { runChat } from "../../src/generation/run-chat.ts";
import { fullGrant, grantOf } from "../../src/keys/key-grant.ts";
import { KeyRequest } from "../../src/keys/key-request.ts";
import { UsageBook } from "../../src/keys/usage-book.ts";
import { serverRun } from "../../src/server/chat-request.ts";
import type { ServerDeps } from "../../src/server/deps.ts";
import type { ServedModel } from "../../src/server/model-service.ts";
import { profiles } from "../../src/server/profiles/index.ts";

function recordingEngine(asked: Array<Omit<GenerateRequest, "id">>): EngineHandle {
  const info = { contextPerSequence: 512, vocabularySize: 100, bosText: "", eosText: "", addsBos: false, controlTokenTexts: [] } as unknown as ModelInfo;
  return {
    info,
    tokenize: async (text) => [...text].map(() => 1),
    detokenize: async () => "",
    countPromptTokens: async (prompt) => prompt.prompt.length,
    async *generate(request): AsyncGenerator<EngineEvent> {
      asked.push(request);
      yield { type: "token", id: "r", token: 2, text: "ok" };
      yield {
        type: "done", id: "r", finishReason: "stop",
        usage: { promptTokens: 4, cachedPromptTokens: 1, completionTokens: 1, timeToFirstTokenMs: 1, promptMs: 1, decodeMs: 1, queueMs: 0 },
      };
    },
    speak: () => {
      throw new Error("no speech");
    },
  };
}

const deps = { profile: profiles.b, models: {} } as unknown as ServerDeps;
const model = { id: "tiny" } as ServedModel;
const spec = { prompt: { kind: "text" as const, text: "hola" }, options: {}, limit: { overflow: "allow" as const, maxTokens: 1 } };

test("a named key's owner, weight and cap reach the engine, and the request cannot name another owner", async () => {
  const asked: Array<Omit<GenerateRequest, "id">> = [];
  const book = new UsageBook();
  const grant = grantOf({ name: "alice", id: "00000000", hash: "$argon2id$x", scopes: ["chat"], weight: 3, max_parallel: 2, created_at: new Date(0).toISOString() });
  const work = new KeyRequest(grant, book);
  const run = work.run(() => serverRun(deps, model, new AbortController().signal, performance.now()));
  const chat = await runChat({ engine: async () => recordingEngine(asked) }, { ...spec, schedule: { session: "s1", owner: "mallory", priority: 5 } }, run);
  await chat.choices[0]!.collect();
  expect(asked[0]!.schedule).toEqual({ session: "s1", owner: "alice", priority: 5, weight: 3, maxParallel: 2 });
  expect(book.get("alice")).toMatchObject({ promptTokens: 4, completionTokens: 1, cachedTokens: 1 });
});

test("an --api-key key is one owner of weight 1 and no cap; without keys the request's own schedule stands", async () => {
  const asked: Array<Omit<GenerateRequest, "id">> = [];
  const plain = new KeyRequest(fullGrant("key-0011223344556677"), new UsageBook());
  const run = plain.run(() => serverRun(deps, model, new AbortController().signal, performance.now()));
  await (await runChat({ engine: async () => recordingEngine(asked) }, spec, run)).choices[0]!.collect();
  expect(asked[0]!.schedule).toEqual({ owner: "key-0011223344556677", weight: 1 });
  const open = serverRun(deps, model, new AbortController().signal, performance.now());
  await (await runChat({ engine: async () => recordingEngine(asked) }, { ...spec, schedule: { priority: 1 } }, open)).choices[0]!.collect();
  expect(asked[1]!.schedule).toEqual({ priority: 1 });
});
