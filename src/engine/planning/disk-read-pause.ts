// How long the engine pauses between two steps while a disk read that a waiting request needs is in
// flight. The read progresses only when the engine's event loop runs (the file's bytes arriving, then a
// checksum slice per turn: prompt-cache/state-file.ts), and the loop runs between steps only. A step of a
// long prefill takes seconds on a CPU, so a state of a few tens of MiB took as many steps to read, and a
// warm turn waited that long for a cold prompt's sequence (planning/preemption.ts). A pause of a quarter
// of the last step at most keeps the streams beside it within 1.25 times their pace.

/** The longest pause between two steps for a disk read. */
export const DISK_READ_PAUSE_MS = 50;

/** Ms the engine may wait for a disk read after a step that took `lastStepMs`. */
export function diskReadPause(lastStepMs: number): number {
  return Math.max(0, Math.min(DISK_READ_PAUSE_MS, lastStepMs / 4));
}
