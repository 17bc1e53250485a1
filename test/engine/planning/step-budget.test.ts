// The step planner without a model: the prompt-token budget beside generating sequences, from measured
// costs, and how admitted prompts share a step.
import { describe, expect, test } from "bun:test";
import { allocatePrefill, BURST_WINDOW_MS, holdsFirstTokens, prefillOrder, promptFlushFor, promptTokenBudget, StepCosts, MIN_PROMPT_CHUNK, STEP_BOUND_FACTOR, type PrefillView } from "../../../src/engine/planning/step-budget.ts";

/** Costs as measured from steps of a machine where a step takes fixedMs + rowMs per generating row + promptMs per prompt token. */
function measured(fixedMs: number, rowMs: number, promptMs: number): StepCosts {
  const costs = new StepCosts();
  for (let i = 0; i < 30; i++) {
    const rows = 1 + (i % 8);
    costs.record(rows, 0, fixedMs + rowMs * rows);
    costs.record(rows, 128, fixedMs + rowMs * rows + promptMs * 128);
  }
  return costs;
}

describe("promptTokenBudget", () => {
  test("with nothing generating, or before costs are known, a step takes what the batch holds", () => {
    expect(promptTokenBudget(measured(20, 5, 1.6), 0, 512)).toBe(512);
    expect(promptTokenBudget(new StepCosts(), 8, 504)).toBe(504);
  });

  test("beside generating sequences, a step stays within STEP_BOUND_FACTOR times their own step (a CPU)", () => {
    const costs = measured(20, 5, 1.6);
    const rows = 8;
    const decodeMs = 20 + 5 * rows;
    const budget = promptTokenBudget(costs, rows, 504);
    expect(budget).toBeLessThan(504);
    const stepMs = decodeMs + budget * 1.6;
    expect(stepMs).toBeLessThanOrEqual(STEP_BOUND_FACTOR * decodeMs + 0.01);
    expect(stepMs).toBeGreaterThan((STEP_BOUND_FACTOR - 0.1) * decodeMs);
  });

  test("steady streams (every step the same rows, no line to fit) still bound a step with prompts beside them", () => {
    // eight clients that started together decode eight rows step after step; then their next prompts arrive
    const costs = new StepCosts();
    for (let i = 0; i < 8; i++) costs.record(0, 128, 10 + 1.6 * 128);
    for (let i = 0; i < 200; i++) costs.record(8, 0, 60);
    const budget = promptTokenBudget(costs, 8, 512);
    expect(budget).toBeLessThan(512);
    expect(60 + budget * 1.6).toBeLessThanOrEqual(STEP_BOUND_FACTOR * 60 + 20);
  });

  test("beside one stream of eight sequences, the bound is a full batch's step, not that stream's own", () => {
    const costs = measured(20, 5, 1.6);
    const alone = promptTokenBudget(costs, 1, 511);
    const full = promptTokenBudget(costs, 1, 511, 8);
    expect(full).toBeGreaterThan(alone);
    // the step stays within STEP_BOUND_FACTOR times a step of all eight generating
    expect(20 + 5 * 1 + full * 1.6).toBeLessThanOrEqual(STEP_BOUND_FACTOR * (20 + 5 * 8) + 0.01);
    // with every sequence generating it is the same bound as before
    expect(promptTokenBudget(costs, 8, 504, 8)).toBe(promptTokenBudget(costs, 8, 504));
  });

  test("never fewer than MIN_PROMPT_CHUNK tokens, so prompts progress even beside a cheap step", () => {
    expect(promptTokenBudget(measured(5, 1, 3), 1, 511)).toBe(MIN_PROMPT_CHUNK);
  });

  test("where prompt tokens are cheap (a GPU) the bound cuts nothing", () => {
    expect(promptTokenBudget(measured(8, 0.3, 0.02), 8, 504)).toBe(504);
  });

  test("costs follow the machine: slower prompt tokens shrink the budget", () => {
    const fast = promptTokenBudget(measured(20, 5, 1), 4, 508);
    const slow = promptTokenBudget(measured(20, 5, 2), 4, 508);
    expect(slow).toBeLessThan(fast);
  });
});

describe("prefill order and shares", () => {
  const view = (left: number, passedOver = 0, run = left): PrefillView => ({ left, run, passedOver });

  test("prompts that finish within a step go first in admission order, then longer ones, fewest tokens left first", () => {
    expect(prefillOrder([view(4000), view(100), view(900), view(30)], 512)).toEqual([1, 3, 2, 0]);
  });

  test("a long prompt passed over gains a step's worth of tokens per step", () => {
    expect(prefillOrder([view(2000, 0), view(1400, 0)], 512)).toEqual([1, 0]);
    expect(prefillOrder([view(2000, 2), view(1400, 0)], 512)).toEqual([0, 1]);
  });

  test("a step takes at most its budget of prompt tokens", () => {
    const prompts = [view(4000)];
    expect(allocatePrefill(prompts, [0], { tokens: 96, batchFree: 504, batchCount: 8, flushTokens: Infinity })).toEqual([96]);
  });

  test("a prompt stops at its boundary (an image, a state to save)", () => {
    expect(allocatePrefill([view(500, 0, 120)], [0], { tokens: 512, batchFree: 512, batchCount: 0, flushTokens: Infinity })).toEqual([120]);
  });

  test("once a prompt ends in a step, the next takes only up to the flush size", () => {
    const prompts = [view(40), view(1000)];
    expect(allocatePrefill(prompts, [0, 1], { tokens: 512, batchFree: 512, batchCount: 0, flushTokens: 64 })).toEqual([40, 24]);
  });

  test("a step that already holds the flush size ends where a prompt ends", () => {
    const prompts = [view(100), view(100)];
    expect(allocatePrefill(prompts, [0, 1], { tokens: 512, batchFree: 512, batchCount: 0, flushTokens: 64 })).toEqual([100, 0]);
  });
});

describe("a burst of prompts", () => {
  const first = { generated: 1, held: false, startedAt: 1000 };
  const burst = (tokensLeft: number, earliestStart = 1000) => ({ tokensLeft, earliestStart });

  test("sequences with their first token alone wait one step when the prompts' rest fits in a batch", () => {
    expect(holdsFirstTokens([first, first], burst(512), 512)).toBe(true);
    expect(holdsFirstTokens([first], burst(513), 512)).toBe(false); // more than one step: no wait
    expect(holdsFirstTokens([first], burst(0), 512)).toBe(false); // nothing to wait for
    expect(holdsFirstTokens([], burst(200), 512)).toBe(false);
  });

  test("a stream already past its first token, or one that waited once, never waits", () => {
    expect(holdsFirstTokens([first, { ...first, generated: 2 }], burst(100), 512)).toBe(false);
    expect(holdsFirstTokens([{ ...first, held: true }], burst(100), 512)).toBe(false);
  });

  test("only prompts admitted with a sequence or after it hold it: a warm turn never waits for a cold prompt running before it", () => {
    expect(holdsFirstTokens([first], burst(100, 1000 - BURST_WINDOW_MS), 512)).toBe(true);
    expect(holdsFirstTokens([first], burst(100, 3000), 512)).toBe(true); // arrived after it, before its second token
    expect(holdsFirstTokens([first], burst(100, 1000 - BURST_WINDOW_MS - 1), 512)).toBe(false);
  });

  test("while nothing generates, a burst that ends within two batches fills each step; otherwise a finished prompt ends the step", () => {
    expect(promptFlushFor(0, 1024, 512, 64)).toBe(Infinity);
    expect(promptFlushFor(0, 1025, 512, 64)).toBe(64); // a long prompt behind short ones: the short ones' first tokens go first
    expect(promptFlushFor(3, 200, 512, 64)).toBe(64);
    // the burst's second step: its first sequences wait (no rows decode), the rest of the prompts go whole
    const views = [128, 128, 128, 128].map((left) => ({ left, run: left, passedOver: 0 }));
    const flush = promptFlushFor(0, 512, 512, 64);
    expect(allocatePrefill(views, prefillOrder(views, 512), { tokens: 512, batchFree: 512, batchCount: 0, flushTokens: flush })).toEqual([128, 128, 128, 128]);
    expect(allocatePrefill(views, prefillOrder(views, 512), { tokens: 512, batchFree: 512, batchCount: 0, flushTokens: 64 })).toEqual([128, 0, 0, 0]);
  });
});
