// The cache-tier decisions without a model: eviction by size and age, which states a leaving sequence
// keeps, and the disk writes' rate.
import { describe, expect, test } from "bun:test";
import { evictionOrder, statesToKeep, WriteBudget } from "../../../src/engine/planning/cache-tiers.ts";

describe("evictionOrder", () => {
  test("least recently used first, until the new entry fits", () => {
    const entries = [{ bytes: 400, lastUsed: 3 }, { bytes: 300, lastUsed: 1 }, { bytes: 200, lastUsed: 2 }];
    expect(evictionOrder(entries, 300, 900, 1000)).toEqual([1]);
    expect(evictionOrder(entries, 600, 900, 1000)).toEqual([1, 2]);
    expect(evictionOrder(entries, 0, 900, 1000)).toEqual([]);
  });

  test("everything when even that does not make room", () => {
    expect(evictionOrder([{ bytes: 10, lastUsed: 1 }], 2000, 10, 1000)).toEqual([0]);
  });
});

describe("statesToKeep", () => {
  const leaving = { cachedLength: 1000, keep: 0, checkpointLength: 0, covered: false, heldElsewhere: false };
  test("a sequence losing many tokens nothing else holds keeps them in host memory", () => {
    expect(statesToKeep(leaving)).toEqual({ checkpoint: false, whole: true });
  });
  test("not when it loses few, or another sequence or entry holds them", () => {
    expect(statesToKeep({ ...leaving, keep: 990 }).whole).toBe(false);
    expect(statesToKeep({ ...leaving, covered: true }).whole).toBe(false);
    expect(statesToKeep({ ...leaving, heldElsewhere: true }).whole).toBe(false);
  });
  test("a recurrent checkpoint about to be lost is kept; the whole memory too unless the checkpoint is all of it", () => {
    expect(statesToKeep({ ...leaving, checkpointLength: 600 })).toEqual({ checkpoint: true, whole: true });
    expect(statesToKeep({ ...leaving, checkpointLength: 1000 })).toEqual({ checkpoint: true, whole: false });
  });
});

describe("WriteBudget", () => {
  test("writes up to the burst at once, then at the rate", () => {
    let now = 0;
    const budget = new WriteBudget(1000, 2000, () => now);
    expect(budget.delayFor(1500)).toBe(0);
    budget.take(1500);
    expect(budget.delayFor(1000)).toBe(500);
    now += 500;
    expect(budget.delayFor(1000)).toBe(0);
  });

  test("a write larger than the burst waits for a full bucket and then holds the next ones back", () => {
    let now = 0;
    const budget = new WriteBudget(1000, 2000, () => now);
    budget.take(2000);
    expect(budget.delayFor(5000)).toBe(2000);
    now += 2000;
    budget.take(5000);
    expect(budget.delayFor(100)).toBe(3100);
  });
});
