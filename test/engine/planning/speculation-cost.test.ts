// The cost side of speculation, without a model: the step-cost line fitted to decode steps, each
// sequence's acceptance rate, the draft length that pays at a given batch, and how Speculation.plan
// backs a sequence off (and probes it again later) when drafting would cost more than it saves, and
// how the steps' measured yield holds drafting where the line was wrong.
import { describe, expect, test } from "bun:test";
import { AcceptanceRate, StepCost, StepYield, worthwhileDraftLength, YIELD_HOLD_MAX_STEPS, YIELD_HOLD_MIN_STEPS } from "../../../src/engine/planning/speculation-cost.ts";
import { ActiveRequest, SequenceSlot } from "../../../src/engine/sequence.ts";
import { Speculation } from "../../../src/engine/speculative/speculation.ts";
import type { Drafter, DraftRequest } from "../../../src/engine/speculative/drafter.ts";

// LFM2-350M on two cores, roughly: one token 8.7 ms, eight rows 27.6 ms
const LFM2 = { fixed: 6, perRow: 2.7 };
const stepMs = (rows: number) => LFM2.fixed + LFM2.perRow * rows;

describe("StepCost", () => {
  test("fits the line of steps of different sizes", () => {
    const cost = new StepCost();
    for (let i = 0; i < 40; i++) for (const rows of [1, 5, 8, 12]) cost.record(rows, stepMs(rows));
    const line = cost.line()!;
    expect(line.fixed).toBeCloseTo(LFM2.fixed, 6);
    expect(line.perRow).toBeCloseTo(LFM2.perRow, 6);
  });

  test("knows nothing from steps of one size, and never gives a negative part", () => {
    const cost = new StepCost();
    for (let i = 0; i < 20; i++) cost.record(4, 20);
    expect(cost.line()).toBeUndefined();
    const falling = new StepCost();
    for (const rows of [1, 2, 3, 4]) falling.record(rows, 10 - rows);
    expect(falling.line()!.perRow).toBe(0);
    expect(falling.line()!.fixed).toBeGreaterThan(0);
  });

  test("follows the machine: newer steps outweigh older ones", () => {
    const cost = new StepCost();
    for (let i = 0; i < 50; i++) for (const rows of [1, 5]) cost.record(rows, stepMs(rows));
    for (let i = 0; i < 200; i++) for (const rows of [1, 5]) cost.record(rows, 2 * stepMs(rows));
    expect(cost.line()!.perRow).toBeCloseTo(2 * LFM2.perRow, 2);
  });
});

describe("AcceptanceRate", () => {
  test("starts at one in two, and follows what the rounds kept", () => {
    const kept = new AcceptanceRate();
    expect(kept.rate).toBe(0.5);
    for (let i = 0; i < 30; i++) kept.settle(4, 4);
    expect(kept.rate).toBeGreaterThan(0.95);
    const rejected = new AcceptanceRate();
    for (let i = 0; i < 30; i++) rejected.settle(4, 0);
    expect(rejected.rate).toBeLessThan(0.01);
    const half = new AcceptanceRate();
    for (let i = 0; i < 30; i++) half.settle(2, 1);
    expect(half.rate).toBeCloseTo(0.5, 2);
  });
});

describe("worthwhileDraftLength", () => {
  const economy = (streams: number, acceptance: number, drafterMs = 0) => ({
    acceptance, tokenMs: stepMs(streams) / streams, draftTokenMs: LFM2.perRow + drafterMs, max: 8,
  });

  test("nothing is worth drafting that is never kept, at any batch", () => {
    for (const streams of [1, 4, 8]) expect(worthwhileDraftLength(economy(streams, 0))).toBe(0);
  });

  test("one stream drafts far at high acceptance; eight streams sharing the weights' read draft less", () => {
    expect(worthwhileDraftLength(economy(1, 0.9))).toBe(8);
    const four = worthwhileDraftLength(economy(4, 0.9));
    const eight = worthwhileDraftLength(economy(8, 0.9));
    expect(four).toBeLessThan(8);
    expect(eight).toBeLessThanOrEqual(four);
    expect(eight).toBeGreaterThanOrEqual(1);
    // at one in two, only one stream gains
    expect(worthwhileDraftLength(economy(1, 0.5))).toBeGreaterThan(0);
    expect(worthwhileDraftLength(economy(8, 0.5))).toBe(0);
  });

  test("a drafter as slow as the model itself is not worth running", () => {
    expect(worthwhileDraftLength(economy(1, 0.99, stepMs(1)))).toBe(0);
  });
});

/** Proposes `length` tokens for each sequence and counts the calls. */
class CountingDrafter implements Drafter {
  calls = 0;
  constructor(private readonly length: number) {}
  draft(requests: DraftRequest[]): number[][] {
    this.calls++;
    return requests.map((r) => Array.from({ length: Math.min(r.max, this.length) }, (_, i) => 100 + i));
  }
  forget(): void {}
  dispose(): void {}
}

let count = 0;
function generating(streams: number): SequenceSlot[] {
  return Array.from({ length: streams }, (_, seq) => {
    const slot = new SequenceSlot(seq);
    const active = new ActiveRequest({ id: `c${++count}`, prompt: [1, 2, 3], maxTokens: 10_000 }, Int32Array.from([1, 2, 3]), () => {});
    active.nextPromptIndex = 3;
    active.pendingToken = 7;
    slot.cached = [1, 2, 3];
    slot.active = active;
    return slot;
  });
}

describe("Speculation.plan with the cost line", () => {
  const knownLine = (speculation: Speculation) => {
    for (let i = 0; i < 20; i++) for (const rows of [1, 4, 8, 12]) speculation.recordStep(rows, stepMs(rows));
  };

  test("eight streams whose drafts are half kept stop drafting, then probe with one token after a pause", () => {
    const slots = generating(8);
    const drafter = new CountingDrafter(4);
    const speculation = new Speculation(drafter, 4, "ngram");
    knownLine(speculation);
    for (const slot of slots) for (let i = 0; i < 10; i++) speculation.settle(slot.active!, 2, 1);
    expect(speculation.plan(slots, 512, 100_000).size).toBe(0);
    expect(drafter.calls).toBe(0);
    // 16 tokens later each sequence probes with one token
    for (const slot of slots) slot.active!.generated += 16;
    const probes = speculation.plan(slots, 512, 100_000);
    expect([...probes.values()].map((d) => d.length)).toEqual(Array(8).fill(1));
  });

  test("one stream whose drafts are nearly always kept drafts at full length", () => {
    const [slot] = generating(1);
    const speculation = new Speculation(new CountingDrafter(4), 4, "ngram");
    knownLine(speculation);
    for (let i = 0; i < 10; i++) speculation.settle(slot!.active!, 4, 4);
    expect(speculation.plan([slot!], 512, 100_000).get(slot!)?.length).toBe(4);
  });

  test("before the line is known, the pace alone decides (drafting is how the line is learnt)", () => {
    const slots = generating(8);
    const speculation = new Speculation(new CountingDrafter(4), 4, "ngram");
    expect(speculation.plan(slots, 512, 100_000).size).toBe(8);
  });

  test("a draft model that proposes nothing pauses the sequence (its decode was spent); an n-gram lookup that finds nothing does not", () => {
    const [slot] = generating(1);
    const silent = new CountingDrafter(0);
    const drafting = new Speculation(silent, 4, "draft");
    expect(drafting.plan([slot!], 512, 100_000).size).toBe(0);
    expect(drafting.plan([slot!], 512, 100_000).size).toBe(0);
    expect(silent.calls).toBe(1);
    slot!.active!.generated += 16;
    drafting.plan([slot!], 512, 100_000);
    expect(silent.calls).toBe(2);
    const lookup = new CountingDrafter(0);
    const ngram = new Speculation(lookup, 4, "ngram");
    ngram.plan([slot!], 512, 100_000);
    ngram.plan([slot!], 512, 100_000);
    expect(lookup.calls).toBe(2);
  });
});

describe("StepYield", () => {
  /** Steps the yield holds drafting at `streams`, counted by asking at each step until it drafts again. */
  const heldSteps = (stepYield: StepYield, streams: number) => {
    let held = 0;
    while (stepYield.holding(streams)) held++;
    return held;
  };
  // four streams: a plain step makes 4 tokens in 100 ms; a drafting step 6 tokens in 200 ms (less per ms)
  const plainSteps = (stepYield: StepYield, count: number) => { for (let i = 0; i < count; i++) stepYield.record(4, false, 4, 100); };
  const losingDraftSteps = (stepYield: StepYield, count: number) => { for (let i = 0; i < count; i++) stepYield.record(4, true, 6, 200); };

  test("drafting steps that produce less per ms than plain ones hold drafting, for longer while they still do, up to a bound", () => {
    const stepYield = new StepYield();
    plainSteps(stepYield, 8);
    losingDraftSteps(stepYield, 3);
    expect(stepYield.holding(4)).toBe(false); // three drafting steps are not yet a comparison
    losingDraftSteps(stepYield, 1);
    expect(heldSteps(stepYield, 4)).toBe(YIELD_HOLD_MIN_STEPS - 1);
    losingDraftSteps(stepYield, 4);
    expect(heldSteps(stepYield, 4)).toBe(2 * YIELD_HOLD_MIN_STEPS - 1);
    for (let i = 0; i < 10; i++) {
      losingDraftSteps(stepYield, 4);
      heldSteps(stepYield, 4);
    }
    losingDraftSteps(stepYield, 4);
    expect(heldSteps(stepYield, 4)).toBe(YIELD_HOLD_MAX_STEPS - 1);
    expect(stepYield.ratios()[4]).toBeCloseTo(0.75, 5);
  });

  test("each number of streams is judged by its own steps, and drafting that pays again ends the doubling", () => {
    const stepYield = new StepYield();
    plainSteps(stepYield, 8);
    losingDraftSteps(stepYield, 4);
    expect(stepYield.holding(1)).toBe(false);
    expect(heldSteps(stepYield, 4)).toBe(YIELD_HOLD_MIN_STEPS - 2);
    // drafting steps that make 10 tokens in 200 ms outweigh the older ones: no hold, and the next loss holds briefly again
    for (let i = 0; i < 30; i++) stepYield.record(4, true, 10, 200);
    expect(stepYield.holding(4)).toBe(false);
    let checks = 0;
    while (!stepYield.holding(4)) {
      losingDraftSteps(stepYield, 4);
      checks++;
    }
    expect(checks).toBeGreaterThan(1); // the better steps still counted for a while
    expect(heldSteps(stepYield, 4)).toBe(YIELD_HOLD_MIN_STEPS - 2);
  });

  test("a plan on hold asks the drafter nothing; other stream counts still draft", () => {
    const drafter = new CountingDrafter(4);
    const speculation = new Speculation(drafter, 4, "ngram");
    for (let i = 0; i < 8; i++) speculation.recordYield(4, false, 4, 100);
    for (let i = 0; i < 4; i++) speculation.recordYield(4, true, 6, 200);
    expect(speculation.plan(generating(4), 512, 100_000).size).toBe(0);
    expect(drafter.calls).toBe(0);
    expect(speculation.plan(generating(1), 512, 100_000).size).toBe(1);
    expect(speculation.yieldRatios[4]).toBeCloseTo(0.75, 5);
  });
});
