// The pause between steps for a disk read, without a model: a quarter of the last step, bounded.
import { describe, expect, test } from "bun:test";
import { diskReadPause, DISK_READ_PAUSE_MS } from "../../../src/engine/planning/disk-read-pause.ts";

describe("disk read pause", () => {
  test("a quarter of the last step's time", () => {
    expect(diskReadPause(40)).toBe(10);
    expect(diskReadPause(8)).toBe(2);
  });

  test("never more than DISK_READ_PAUSE_MS, however long the step (a CPU prefill step takes seconds)", () => {
    expect(diskReadPause(3000)).toBe(DISK_READ_PAUSE_MS);
  });

  test("never negative", () => {
    expect(diskReadPause(-1)).toBe(0);
  });
});
