// The preemption planner without a model: which running prompt gives its sequence to a mostly cached
// waiting request, and the bounds that keep a cold prompt from being pushed back without end.
import { describe, expect, test } from "bun:test";
import { choosePreemption, mayYield, MAX_YIELDS, PREEMPT_MIN_LEFT, PREEMPT_WORK_RATIO, type RunningPrompt } from "../../../src/engine/planning/preemption.ts";

const running = (left: number, more: Partial<RunningPrompt> = {}): RunningPrompt => ({ left, priority: 0, yielded: 0, pinned: false, ...more });
const warm = (uncachedTokens: number, priority = 0) => ({ uncachedTokens, priority });

describe("preemption", () => {
  test("a warm turn takes the sequence of the cold prompt with the most left", () => {
    expect(choosePreemption(warm(400), [running(3000), running(9000), running(5000)])).toBe(1);
  });

  test("nobody yields to a request whose uncached work is more than a quarter of what a prompt has left", () => {
    expect(choosePreemption(warm(2501), [running(10000)])).toBeUndefined();
    expect(choosePreemption(warm(2500), [running(10000)])).toBe(0);
    expect(PREEMPT_WORK_RATIO).toBe(4);
  });

  test("a prompt close to its end keeps its sequence", () => {
    expect(choosePreemption(warm(10), [running(PREEMPT_MIN_LEFT - 1)])).toBeUndefined();
    expect(choosePreemption(warm(10), [running(PREEMPT_MIN_LEFT)])).toBe(0);
  });

  test("a prompt yields at most MAX_YIELDS times", () => {
    expect(choosePreemption(warm(10), [running(8000, { yielded: MAX_YIELDS })])).toBeUndefined();
    expect(choosePreemption(warm(10), [running(8000, { yielded: MAX_YIELDS }), running(2000)])).toBe(1);
  });

  test("generating sequences and prompts with images never yield", () => {
    expect(mayYield(running(8000, { pinned: true }))).toBe(false);
    expect(choosePreemption(warm(10), [running(8000, { pinned: true })])).toBeUndefined();
  });

  test("a request never takes the sequence of one with a lower priority value", () => {
    expect(choosePreemption(warm(10, 1), [running(8000, { priority: 0 })])).toBeUndefined();
    expect(choosePreemption(warm(10, 0), [running(8000, { priority: 1 })])).toBe(0);
    expect(choosePreemption(warm(10, -1), [running(8000, { priority: 0 }), running(9000, { priority: -2 })])).toBe(0);
  });

  test("a waiting request with nothing uncached still needs a prompt with PREEMPT_MIN_LEFT left", () => {
    expect(choosePreemption(warm(0), [running(PREEMPT_MIN_LEFT)])).toBe(0);
    expect(choosePreemption(warm(0), [running(100)])).toBeUndefined();
  });
});
