// ThreadGovernor against a model of a machine: a step's cost per token depends on the thread count and
// on whether other work holds a core (ggml's threads then wait at every barrier for the one that lost
// its core). The governor must find the cheap count when the machine is busy, come back to all cores
// when it is idle again, and spend little on trials either way. A fake clock advances by each step's cost.
import { expect, test } from "bun:test";
import { ThreadGovernor, threadCandidates } from "../../src/engine/thread-governor.ts";

/** ms per decode step of one token: measured shapes (2 cores, 350M model): idle 9 / 16 ms, busy 700 / 70 ms. */
type Machine = (threads: number) => number;
const idle2: Machine = (threads) => (threads >= 2 ? 9 : 16);
const busy2: Machine = (threads) => (threads >= 2 ? 700 : 70);

function simulate(maxThreads: number, phases: Array<{ machine: Machine; steps: number }>) {
  let clock = 0;
  let threads = maxThreads;
  const governor = new ThreadGovernor({ maxThreads, apply: (n) => (threads = n), now: () => clock });
  const perPhase: Array<{ ms: number; steps: number; endThreads: number }> = [];
  for (const { machine, steps } of phases) {
    let ms = 0;
    for (let i = 0; i < steps; i++) {
      const cost = machine(threads);
      clock += cost;
      ms += cost;
      governor.record(cost, 1);
    }
    perPhase.push({ ms, steps, endThreads: threads });
  }
  return perPhase;
}

test("candidates: all cores, all but one, half, one", () => {
  expect(threadCandidates(16)).toEqual([16, 15, 8, 1]);
  expect(threadCandidates(2)).toEqual([2, 1]);
  expect(threadCandidates(1)).toEqual([1]);
});

test("on a busy machine it moves to the count that is not held up, and stays there", () => {
  const [busy] = simulate(2, [{ machine: busy2, steps: 2000 }]);
  expect(busy!.endThreads).toBe(1);
  // all 2000 steps at 1 thread would take 140 s; at 2 threads 1400 s
  expect(busy!.ms).toBeLessThan(140_000 * 1.1);
});

test("a machine that turns busy, or idle again, is noticed within seconds of its (simulated) time", () => {
  let clock = 0;
  const state = { threads: 2 };
  const governor = new ThreadGovernor({ maxThreads: 2, apply: (n) => (state.threads = n), now: () => clock });
  for (let i = 0; i < 5_000; i++) {
    clock += idle2(state.threads);
    governor.record(idle2(state.threads), 1);
  }
  const turnedBusy = clock;
  while (state.threads !== 1) {
    clock += busy2(state.threads);
    governor.record(busy2(state.threads), 1);
  }
  expect(clock - turnedBusy).toBeLessThan(3_000);
  // and idle again: back to both cores within seconds too
  for (let i = 0; i < 2_000; i++) {
    clock += busy2(state.threads);
    governor.record(busy2(state.threads), 1);
  }
  const turnedIdle = clock;
  while ((state.threads as number) !== 2) {
    clock += idle2(state.threads);
    governor.record(idle2(state.threads), 1);
  }
  expect(clock - turnedIdle).toBeLessThan(3_000);
});

test("on an idle machine it keeps all cores, and the trials cost under 1%", () => {
  const [idle] = simulate(2, [{ machine: idle2, steps: 100_000 }]);
  expect(idle!.endThreads).toBe(2);
  expect(idle!.ms).toBeLessThan(100_000 * 9 * 1.01);
});

test("it follows the machine: busy, then idle again, then busy", () => {
  const phases = simulate(2, [{ machine: busy2, steps: 500 }, { machine: idle2, steps: 20_000 }, { machine: busy2, steps: 500 }]);
  expect(phases.map((p) => p.endThreads)).toEqual([1, 2, 1]);
});

test("steps of another size are not compared: a prompt chunk does not decide anything", () => {
  let threads = 2;
  let clock = 0;
  const governor = new ThreadGovernor({ maxThreads: 2, apply: (n) => (threads = n), now: () => clock });
  // decode steps of 1 token, then a long trial window broken by 512-token prompt steps that are cheap per token
  for (let i = 0; i < 10_000; i++) {
    const tokens = i % 3 === 0 ? 512 : 1;
    const cost = tokens === 512 ? (threads >= 2 ? 300 : 560) : idle2(threads);
    clock += cost;
    governor.record(cost, tokens);
  }
  expect(threads).toBe(2);
});
