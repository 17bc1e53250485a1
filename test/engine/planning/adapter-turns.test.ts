// The adapter-turn planner without a model: one adapter set per step, turns bounded in steps, the longest
// waiting adapter next, and vLLM's --max-loras at admission.
import { describe, expect, test } from "bun:test";
import {
  advanceTurn, chooseAdapterTurn, mayAdmitAdapter, ADAPTER_TURN_STEPS, BASE_ADAPTER, type AdapterTurn, type AdapterWork,
} from "../../../src/engine/planning/adapter-turns.ts";

/**
 * Runs the planner for `steps` steps over adapters that always have work (admitted at step 0 in the order
 * given), keeping `since` as the scheduler does. Returns the adapter of each step.
 */
function simulate(adapters: number[], steps: number, turnSteps = ADAPTER_TURN_STEPS): number[] {
  const since = new Map(adapters.map((a) => [a, 0]));
  let turn: AdapterTurn | undefined;
  const ran: number[] = [];
  for (let step = 1; step <= steps; step++) {
    const work: AdapterWork[] = adapters.map((adapter) => ({ adapter, since: since.get(adapter)! }));
    const adapter = chooseAdapterTurn(work, turn, turnSteps)!;
    turn = advanceTurn(turn, adapter);
    since.set(adapter, step);
    ran.push(adapter);
  }
  return ran;
}

/** The longest run of steps an adapter waited between two of its own. */
function longestWait(ran: number[], adapter: number): number {
  let last = -1;
  let longest = 0;
  ran.forEach((a, step) => {
    if (a !== adapter) return;
    longest = Math.max(longest, step - last - 1);
    last = step;
  });
  return longest;
}

describe("chooseAdapterTurn", () => {
  test("nothing admitted: no turn", () => {
    expect(chooseAdapterTurn([], undefined)).toBeUndefined();
  });

  test("one adapter with work runs every step, however long its turn has been", () => {
    expect(simulate([3], 50).every((a) => a === 3)).toBe(true);
  });

  test("a turn lasts ADAPTER_TURN_STEPS steps, then the next adapter gets the context", () => {
    const ran = simulate([BASE_ADAPTER, 1, 2], ADAPTER_TURN_STEPS * 3);
    expect(ran.slice(0, ADAPTER_TURN_STEPS).every((a) => a === BASE_ADAPTER)).toBe(true);
    expect(ran.slice(ADAPTER_TURN_STEPS, 2 * ADAPTER_TURN_STEPS).every((a) => a === 1)).toBe(true);
    expect(ran.slice(2 * ADAPTER_TURN_STEPS).every((a) => a === 2)).toBe(true);
  });

  test("no adapter waits more than (k - 1) turns: every one runs, and switches happen only at turn ends", () => {
    const adapters = [BASE_ADAPTER, 1, 2, 3];
    const ran = simulate(adapters, 400);
    for (const adapter of adapters) expect(longestWait(ran, adapter)).toBeLessThanOrEqual((adapters.length - 1) * ADAPTER_TURN_STEPS);
    const switches = ran.filter((a, i) => i > 0 && a !== ran[i - 1]).length;
    expect(switches).toBeLessThanOrEqual(Math.ceil(400 / ADAPTER_TURN_STEPS));
  });

  test("the adapter that waited longest goes next, not one admitted after it", () => {
    const work: AdapterWork[] = [{ adapter: 1, since: 40 }, { adapter: 2, since: 95 }, { adapter: 3, since: 12 }];
    expect(chooseAdapterTurn(work, { adapter: 1, steps: ADAPTER_TURN_STEPS })).toBe(3);
  });

  test("a turn whose adapter has nothing left ends at once", () => {
    const work: AdapterWork[] = [{ adapter: 2, since: 5 }];
    expect(chooseAdapterTurn(work, { adapter: 1, steps: 1 })).toBe(2);
  });

  test("a turn under way keeps the context before its bound", () => {
    const work: AdapterWork[] = [{ adapter: 1, since: 50 }, { adapter: 2, since: 0 }];
    expect(chooseAdapterTurn(work, { adapter: 1, steps: ADAPTER_TURN_STEPS - 1 })).toBe(1);
    expect(chooseAdapterTurn(work, { adapter: 1, steps: ADAPTER_TURN_STEPS })).toBe(2);
  });
});

describe("advanceTurn", () => {
  test("counts the steps of one adapter and starts again at a switch", () => {
    expect(advanceTurn(undefined, 4)).toEqual({ adapter: 4, steps: 1 });
    expect(advanceTurn({ adapter: 4, steps: 3 }, 4)).toEqual({ adapter: 4, steps: 4 });
    expect(advanceTurn({ adapter: 4, steps: 3 }, BASE_ADAPTER)).toEqual({ adapter: BASE_ADAPTER, steps: 1 });
  });
});

describe("mayAdmitAdapter", () => {
  test("the base model and adapters already running are always admitted", () => {
    expect(mayAdmitAdapter(BASE_ADAPTER, new Set([1, 2]), 1)).toBe(true);
    expect(mayAdmitAdapter(2, new Set([1, 2]), 1)).toBe(true);
  });

  test("another adapter waits while --max-loras adapters hold sequences; the base model takes no slot", () => {
    expect(mayAdmitAdapter(3, new Set([1]), 1)).toBe(false);
    expect(mayAdmitAdapter(3, new Set([BASE_ADAPTER, 1]), 2)).toBe(true);
    expect(mayAdmitAdapter(3, new Set([1, 2]), 2)).toBe(false);
    expect(mayAdmitAdapter(3, new Set([BASE_ADAPTER]), 1)).toBe(true);
  });
});
