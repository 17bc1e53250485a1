import { expect, test } from "bun:test";
import { ARRIVAL_QUIET_MS, ARRIVAL_WINDOW_MS, gatherArrivals } from "../../../src/engine/planning/arrival-window.ts";

test("an idle engine waits while requests keep arriving, never past the window", () => {
  // a lone request: waits out the quiet time only
  expect(gatherArrivals(0, 0)).toBe(true);
  expect(gatherArrivals(ARRIVAL_QUIET_MS, ARRIVAL_QUIET_MS)).toBe(false);
  // a burst a millisecond apart keeps it waiting
  expect(gatherArrivals(1, 10)).toBe(true);
  // however long the burst, the window ends the wait
  expect(gatherArrivals(0, ARRIVAL_WINDOW_MS)).toBe(false);
  expect(ARRIVAL_WINDOW_MS).toBeLessThanOrEqual(25);
});
