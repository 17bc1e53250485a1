// Fair turns between owners (API keys) in a real engine: one key's flood of parallel requests does not
// hold another key's single request behind its queue, and a key's sequence cap holds. The rule itself is
// planning/admission.ts (tested without a model in test/engine/planning/admission.test.ts).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Engine } from "../../src/engine/engine.ts";
import type { GenerateRequest, RequestSchedule } from "../../src/engine/types.ts";
import { ensureModel } from "../../scripts/gen-models.ts";

let engine: Engine;
beforeAll(async () => {
  engine = Engine.load({ modelPath: await ensureModel("tiny-llama"), parallel: 2, contextPerSequence: 512, threads: 2, cacheRamMiB: 0 });
});
afterAll(() => engine.dispose());

let nextId = 0;
/** Submits a request; `events` gets "first:<name>" at its first token and "end:<name>" at its end. */
function run(name: string, schedule: RequestSchedule, events: string[], maxTokens = 12): Promise<void> {
  const request: GenerateRequest = {
    id: `f${++nextId}`, prompt: `${name}: tell me about the sea`, maxTokens, ignoreEos: true, sampling: { temperature: 0 }, schedule,
  };
  let first = true;
  return new Promise((resolve, reject) => {
    engine.submit(request, (event) => {
      if (event.type === "token" && first) {
        first = false;
        events.push(`first:${name}`);
      } else if (event.type === "done") {
        events.push(`end:${name}`);
        resolve();
      } else if (event.type === "error") {
        reject(new Error(event.message));
      }
    });
  });
}

test("one key's eight parallel requests do not hold another key's single request behind them", async () => {
  const events: string[] = [];
  // all queued in one tick: the flood first, the single request last
  const flood = Array.from({ length: 8 }, (_, i) => run(`flood${i}`, { owner: "flood" }, events));
  const single = run("single", { owner: "single" }, events);
  await Promise.all([...flood, single]);
  // the two sequences go one to each key: the single request does not wait for any flood request to end
  const singleStart = events.indexOf("first:single");
  expect(events.filter((e) => e.startsWith("first:")).indexOf("first:single")).toBeLessThan(2);
  expect(events.slice(0, singleStart).filter((e) => e.startsWith("end:"))).toEqual([]);
});

test("when one key holds every sequence, the next sequence to free goes to the other key", async () => {
  const events: string[] = [];
  const flood = Array.from({ length: 8 }, (_, i) => run(`busy${i}`, { owner: "flood" }, events));
  // the flood is admitted first (both sequences), then the other key's request arrives
  await Bun.sleep(0);
  const single = run("later", { owner: "single" }, events);
  await Promise.all([...flood, single]);
  // both flood sequences may free in the same step: the other key gets one of them, not the ninth turn
  expect(events.filter((e) => e.startsWith("first:")).indexOf("first:later")).toBeLessThanOrEqual(3);
  expect(events.indexOf("first:later")).toBeLessThan(events.indexOf("end:busy3"));
});

test("a key's sequence cap holds while another key uses the rest", async () => {
  const events: string[] = [];
  // the capped key's requests start one at a time even though a second sequence is free at times
  const cappedRuns: Promise<void>[] = [];
  for (let i = 0; i < 3; i++) cappedRuns.push(run(`capped${i}`, { owner: "capped", maxParallel: 1 }, events, 16));
  const other = run("other", { owner: "other" }, events, 48);
  await Promise.all([...cappedRuns, other]);
  // between one capped request's first token and its end, no other capped request starts
  for (let i = 0; i < 3; i++) {
    const start = events.indexOf(`first:capped${i}`);
    const end = events.indexOf(`end:capped${i}`);
    const startedMeanwhile = events.slice(start + 1, end).filter((e) => e.startsWith("first:capped"));
    expect(startedMeanwhile).toEqual([]);
  }
  // and the other key ran beside them
  expect(events.indexOf("first:other")).toBeLessThan(events.indexOf("end:capped0"));
});
