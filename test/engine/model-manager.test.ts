// ModelManager: engines keyed by model and load options, unloaded after their keep-alive, capped in
// number by stopping the least recently used idle one, and never stopped while busy.
import { afterEach, beforeAll, expect, test } from "bun:test";
import { ModelManager } from "../../src/engine/model-manager.ts";
import type { EngineProcess } from "../../src/engine/engine-process.ts";
import { ensureModel } from "../../scripts/gen-models.ts";

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

test("a busy engine is not stopped to make room", async () => {
  const m = manager(1);
  const busy: EngineProcess = await m.engine({ modelPath: llama, parallel: 1, contextPerSequence: 4096 });
  const stream = busy.generate({ prompt: "Hi", maxTokens: 100000, ignoreEos: true });
  await stream.next();
  const other = await m.engine({ modelPath: lfm2, parallel: 1, contextPerSequence: 256 });
  expect(other.alive).toBe(true);
  expect(busy.alive).toBe(true);
  await stream.return(undefined);
});
