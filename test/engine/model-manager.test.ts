// ModelManager: engines keyed by model and load options, unloaded after their keep-alive, capped in
// number by stopping the least recently used idle one (loads one at a time, so the cap holds under
// concurrent loads), never stopped while busy, and one instance per model when asked (Ollama's rule).
import { afterEach, beforeAll, expect, test } from "bun:test";
import { ModelManager } from "../../src/engine/model-manager.ts";
import { EngineLeases } from "../../src/engine/engine-leases.ts";
import type { EngineProcess } from "../../src/engine/engine-process.ts";
import { ensureModel } from "../../scripts/gen-models.ts";
import { engineProcesses } from "../fixtures/child-processes.ts";

let llama: string;
let lfm2: string;
let bert: string;
const managers: ModelManager[] = [];

function manager(maxLoaded?: number): ModelManager {
  const m = new ModelManager(maxLoaded);
  managers.push(m);
  return m;
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await condition()) return true;
    await Bun.sleep(50);
  }
  return condition();
}

beforeAll(async () => {
  [llama, lfm2, bert] = await Promise.all([ensureModel("tiny-llama"), ensureModel("tiny-lfm2"), ensureModel("tiny-bert")]);
});
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stopAll()));
});

test("the same model and options share one engine; other options get their own", async () => {
  const m = manager();
  const a = await m.engine({ modelPath: llama, parallel: 2, contextPerSequence: 256 });
  const b = await m.engine({ modelPath: llama, parallel: 2, contextPerSequence: 256 });
  const c = await m.engine({ modelPath: llama, parallel: 2, contextPerSequence: 512 });
  expect(b.pid).toBe(a.pid);
  expect(c.pid).not.toBe(a.pid);
  expect(c.info.contextPerSequence).toBe(512);
});

test("without a context size the engine takes 4096 tokens, or the trained context when shorter", async () => {
  const engine = await manager().engine({ modelPath: llama, parallel: 1 });
  expect(engine.info.contextPerSequence).toBe(Math.min(4096, engine.info.trainedContextLength));
});

test("an idle engine is unloaded after its keep-alive", async () => {
  const m = manager();
  const engine = await m.engine({ modelPath: llama, parallel: 1, contextPerSequence: 256 }, 200);
  for await (const _ of engine.generate({ prompt: "Hi", maxTokens: 2 })) { /* drain */ }
  expect(await waitFor(() => !engine.alive, 5000)).toBe(true);
  expect(await m.loaded()).toEqual([]);
});

test("at the cap, the least recently used idle engine is stopped", async () => {
  const m = manager(2);
  const first = await m.engine({ modelPath: llama, parallel: 1, contextPerSequence: 256 });
  const second = await m.engine({ modelPath: lfm2, parallel: 1, contextPerSequence: 256 });
  await m.engine({ modelPath: llama, parallel: 1, contextPerSequence: 256 }); // first is now the most recent
  const third = await m.engine({ modelPath: bert, parallel: 1, embeddings: true });
  expect(third.alive).toBe(true);
  expect(await waitFor(() => !second.alive, 5000)).toBe(true);
  expect(first.alive).toBe(true);
  expect((await m.loaded()).length).toBe(2);
});

test("a busy engine is not stopped to make room: the next load waits until it is idle", async () => {
  const m = manager(1);
  const busy: EngineProcess = await m.engine({ modelPath: llama, parallel: 1, contextPerSequence: 4096 });
  const stream = busy.generate({ prompt: "Hi", maxTokens: 100000, ignoreEos: true });
  await stream.next();
  let other: EngineProcess | undefined;
  const waiting = m.nextLoadWait();
  const loading = m.engine({ modelPath: lfm2, parallel: 1, contextPerSequence: 256 }).then((engine) => (other = engine));
  expect(await waiting).toContain("waiting for one to finish");
  expect(other).toBeUndefined();
  expect(busy.alive).toBe(true);
  expect(childEngines()).toBe(1);
  await stream.return(undefined);
  await loading;
  expect(other!.alive).toBe(true);
  expect(busy.alive).toBe(false);
});

/** Engine child processes of this test process that are running now. */
const childEngines = () => engineProcesses(process.pid).length;

test("the cap holds under concurrent loads: 6 requests with different contexts never run more than 3 engines", async () => {
  const m = manager(3);
  let most = 0;
  const sampler = setInterval(() => (most = Math.max(most, childEngines())), 10);
  try {
    const contexts = [256, 512, 768, 1024, 1280, 1536];
    const engines = await Promise.all(contexts.map((contextPerSequence) => m.engine({ modelPath: llama, parallel: 1, contextPerSequence, threads: 1 })));
    expect(engines.map((e) => e.info.contextPerSequence)).toEqual(contexts);
  } finally {
    clearInterval(sampler);
  }
  most = Math.max(most, childEngines());
  expect(most).toBeGreaterThan(0);
  expect(most).toBeLessThanOrEqual(3);
  expect((await m.loaded()).length).toBeLessThanOrEqual(3);
});

test("one instance per model: other options reload it, a smaller context shares the loaded one", async () => {
  const m = manager(3);
  const small = await m.engine({ modelPath: llama, parallel: 1, contextPerSequence: 256 }, Infinity, "longest", "one");
  const large = await m.engine({ modelPath: llama, parallel: 1, contextPerSequence: 512 }, Infinity, "longest", "one");
  expect(large.pid).not.toBe(small.pid);
  expect(small.alive).toBe(false);
  expect(large.info.contextPerSequence).toBe(512);
  const again = await m.engine({ modelPath: llama, parallel: 1, contextPerSequence: 256 }, Infinity, "longest", "one");
  expect(again.pid).toBe(large.pid);
  expect(m.loadedEngines()).toHaveLength(1);
  // other load options than the context: a reload too
  const threads = await m.engine({ modelPath: llama, parallel: 1, contextPerSequence: 256, threads: 1 }, Infinity, "longest", "one");
  expect(large.alive).toBe(false);
  expect(m.loadedEngines().map((l) => l.engine.pid)).toEqual([threads.pid]);
  // another model is another instance
  await m.engine({ modelPath: lfm2, parallel: 1, contextPerSequence: 256 }, Infinity, "longest", "one");
  expect(m.loadedEngines()).toHaveLength(2);
});

test("one instance per model: a reload waits for the loaded instance's requests to end", async () => {
  const m = manager(3);
  // a context long enough that the generation is still running when the reload is asked for
  const first = await m.engine({ modelPath: llama, parallel: 2, contextPerSequence: 2048 }, Infinity, "longest", "one");
  const stream = first.generate({ prompt: "Hi", maxTokens: 100000, ignoreEos: true });
  await stream.next();
  let second: EngineProcess | undefined;
  const waiting = m.nextLoadWait();
  const reloading = m.engine({ modelPath: llama, parallel: 2, contextPerSequence: 4096 }, Infinity, "longest", "one").then((e) => (second = e));
  expect(await waiting).toContain("waiting for its requests to end");
  expect(second).toBeUndefined();
  expect(first.alive).toBe(true);
  // requests for the old options wait behind the reload instead of keeping the old instance busy
  const sameAsFirst = m.engine({ modelPath: llama, parallel: 2, contextPerSequence: 2048 }, Infinity, "longest", "one");
  await stream.return(undefined);
  await reloading;
  expect(first.alive).toBe(false);
  expect((await sameAsFirst).pid).toBe(second!.pid);
  expect(childEngines()).toBe(1);
});

/**
 * What a request does with its engine between being handed it and its answer's end: tokenize, generate,
 * tokenize again (Ollama's reply context), with the engine idle in between, for longer than the grace
 * the manager gives callers outside a lease scope (1 s). Every step must find the engine running.
 */
async function useLikeARequest(engine: EngineProcess, forMs = 2500): Promise<number> {
  const until = performance.now() + forMs;
  let steps = 0;
  while (performance.now() < until) {
    await engine.tokenize("Hello there");
    for await (const event of engine.generate({ prompt: "Hi", maxTokens: 2 })) {
      if (event.type === "error") throw new Error(event.message);
    }
    steps++;
  }
  return steps;
}

test("a reload under the one-instance rule waits for the request that holds the loaded instance", async () => {
  const m = manager(2);
  const request = new EngineLeases();
  const first = await request.run(() => m.engine({ modelPath: llama, parallel: 1, contextPerSequence: 512 }, Infinity, "longest", "one"));
  let second: EngineProcess | undefined;
  const reloading = m.engine({ modelPath: llama, parallel: 1, contextPerSequence: 1024 }, Infinity, "longest", "one").then((e) => (second = e));
  expect(await request.run(() => useLikeARequest(first))).toBeGreaterThan(0);
  expect(first.alive).toBe(true);
  expect(second).toBeUndefined();
  // asking again within the same request hands it the instance it holds, retiring or not
  expect((await request.run(() => m.engine({ modelPath: llama, parallel: 1, contextPerSequence: 512 }, Infinity, "longest", "one"))).pid).toBe(first.pid);
  request.end();
  await reloading;
  expect(first.alive).toBe(false);
  expect(second!.info.contextPerSequence).toBe(1024);
});

test("at the cap, an engine a request holds is not stopped for room: the load waits for the request's end", async () => {
  const m = manager(1);
  const request = new EngineLeases();
  const held = await request.run(() => m.engine({ modelPath: llama, parallel: 1, contextPerSequence: 256 }));
  let other: EngineProcess | undefined;
  const loading = m.engine({ modelPath: lfm2, parallel: 1, contextPerSequence: 256 }).then((engine) => (other = engine));
  await request.run(() => useLikeARequest(held));
  expect(held.alive).toBe(true);
  expect(other).toBeUndefined();
  expect(childEngines()).toBe(1);
  request.end();
  await loading;
  expect(held.alive).toBe(false);
  expect(other!.alive).toBe(true);
});

test("an engine a request holds is not unloaded for idleness or by an unload from elsewhere until the request ends", async () => {
  const m = manager();
  const request = new EngineLeases();
  const held = await request.run(() => m.engine({ modelPath: llama, parallel: 1, contextPerSequence: 256 }, 0));
  await m.unload(held);
  await request.run(() => useLikeARequest(held));
  expect(held.alive).toBe(true);
  request.end();
  expect(await waitFor(() => !held.alive, 5000)).toBe(true);
});

test("a context beyond the trained one is clamped to it, never wrapped", async () => {
  const m = manager();
  for (const asked of [1e9, 2 ** 30, 2 ** 32 + 512]) {
    const engine = await m.engine({ modelPath: llama, parallel: 4, contextPerSequence: asked });
    expect(engine.info.contextPerSequence).toBe(engine.info.trainedContextLength);
  }
});
