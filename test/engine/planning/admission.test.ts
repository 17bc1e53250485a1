// The admission planner without a model: fair turns between owners, warm before cold within an owner,
// priority, the starvation bound and sequence caps.
import { describe, expect, test } from "bun:test";
import { admissionWindow, chooseAdmission, overtakenBy, ADMISSION_WINDOW, MAX_OVERTAKEN, type OwnerShare, type WaitingView } from "../../../src/engine/planning/admission.ts";

const waiting = (owner = "", overtaken = 0, priority = 0): WaitingView => ({ owner, overtaken, priority });
const shares = (table: Record<string, Partial<OwnerShare>> = {}) => (owner: string): OwnerShare => ({ running: 0, weight: 1, maxParallel: Infinity, ...table[owner] });
/** Weighs every windowed request with the given uncached work and returns the chosen queue index. */
function choose(queue: WaitingView[], work: number[], shareOf = shares()): number | undefined {
  const candidates = admissionWindow(queue, shareOf).map((index) => ({ index, uncachedTokens: work[index]! }));
  return chooseAdmission(queue, candidates, shareOf)?.index;
}

describe("admission within one owner", () => {
  test("the request with the least uncached work goes first: a warm turn before a cold prompt that came first", () => {
    expect(choose([waiting(), waiting(), waiting()], [11000, 40, 300])).toBe(1);
  });

  test("ties go to the oldest", () => {
    expect(choose([waiting(), waiting(), waiting()], [50, 20, 20])).toBe(1);
  });

  test("a request overtaken MAX_OVERTAKEN times goes next whatever its work", () => {
    expect(choose([waiting("", MAX_OVERTAKEN), waiting()], [11000, 10])).toBe(0);
    expect(choose([waiting("", MAX_OVERTAKEN - 1), waiting()], [11000, 10])).toBe(1);
  });

  test("a cold prompt is overtaken at most MAX_OVERTAKEN times by a stream of warm turns", () => {
    const queue: Array<WaitingView & { name: string; work: number }> = [{ ...waiting(), name: "cold", work: 9000 }];
    const order: string[] = [];
    for (let turn = 0; turn < 8; turn++) queue.push({ ...waiting(), name: `warm${turn}`, work: 20 });
    while (queue.length > 0) {
      const index = choose(queue, queue.map((q) => q.work))!;
      for (const i of overtakenBy(queue, index)) queue[i]!.overtaken++;
      order.push(queue.splice(index, 1)[0]!.name);
    }
    expect(order.indexOf("cold")).toBe(MAX_OVERTAKEN);
  });

  test("lower priority values go first, before less work", () => {
    expect(choose([waiting("", 0, 0), waiting("", 0, -1)], [10, 5000])).toBe(1);
  });

  test("only each owner's oldest ADMISSION_WINDOW requests are weighed", () => {
    const queue = Array.from({ length: ADMISSION_WINDOW + 3 }, () => waiting());
    expect(admissionWindow(queue, shares())).toHaveLength(ADMISSION_WINDOW);
  });
});

describe("fair turns between owners", () => {
  test("a single request of another owner goes before an owner that holds sequences, wherever it waits in the queue", () => {
    const queue = [...Array.from({ length: 20 }, () => waiting("flood")), waiting("single")];
    const work = queue.map((_, i) => (i === 20 ? 5000 : 10));
    expect(choose(queue, work, shares({ flood: { running: 3 } }))).toBe(20);
  });

  test("owners alternate: admitting in turn gives each the same count of sequences", () => {
    const queue = [...Array.from({ length: 8 }, () => waiting("a")), ...Array.from({ length: 8 }, () => waiting("b"))];
    const running: Record<string, number> = { a: 0, b: 0 };
    const order: string[] = [];
    for (let i = 0; i < 6; i++) {
      const shareOf = (owner: string): OwnerShare => ({ running: running[owner]!, weight: 1, maxParallel: Infinity });
      const index = choose(queue, queue.map(() => 100), shareOf)!;
      const owner = queue.splice(index, 1)[0]!.owner;
      running[owner]!++;
      order.push(owner);
    }
    expect(order).toEqual(["a", "b", "a", "b", "a", "b"]);
  });

  test("weights share sequences in proportion: weight 2 holds two for the other's one", () => {
    const queue = [waiting("heavy"), waiting("light")];
    expect(choose(queue, [10, 10], shares({ heavy: { running: 1, weight: 2 }, light: { running: 1 } }))).toBe(0);
    expect(choose(queue, [10, 10], shares({ heavy: { running: 2, weight: 2 }, light: { running: 0 } }))).toBe(1);
  });

  test("an owner at its sequence cap waits, even alone", () => {
    expect(choose([waiting("capped"), waiting("capped")], [10, 10], shares({ capped: { running: 2, maxParallel: 2 } }))).toBeUndefined();
    expect(choose([waiting("capped"), waiting("other")], [10, 9000], shares({ capped: { running: 2, maxParallel: 2 } }))).toBe(1);
  });

  test("overtaking counts only within an owner", () => {
    const queue = [waiting("a"), waiting("b"), waiting("a")];
    expect(overtakenBy(queue, 2)).toEqual([0]);
  });
});
