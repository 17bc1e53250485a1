// How much of the machine other processes use. On a small machine shared with other developers, a second
// llama.cpp process spinning its threads can slow a 2-thread benchmark 50-fold, so every sample records how
// busy the rest of the machine was while it ran, and measurements wait for a quiet machine first.
import { existsSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ, 100 on Linux
const canMeasure = existsSync("/proc/stat");

export interface CpuTimes {
  busySeconds: number; // all CPUs, all processes (steal counts: the host took the time)
  at: number; // performance.now()
}

export function readCpuTimes(): CpuTimes {
  const at = performance.now();
  if (!canMeasure) return { busySeconds: 0, at };
  const fields = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return { busySeconds: (user + nice + system + irq + softirq + steal) / CLOCK_TICKS_PER_SECOND, at };
}

/** Share (0–1) of the machine's CPU capacity used between two readings by processes other than ours. */
export function foreignCpuShare(start: CpuTimes, end: CpuTimes, ownCpuSeconds: number): number {
  if (!canMeasure) return 0;
  const capacity = ((end.at - start.at) / 1000) * availableParallelism();
  if (capacity <= 0) return 0;
  return Math.min(1, Math.max(0, (end.busySeconds - start.busySeconds - ownCpuSeconds) / capacity));
}

/**
 * Waits until other processes use less than `threshold` of the CPU over a 2-second window, or until
 * `timeoutMs` has passed. Returns the share seen last.
 */
export async function waitForQuietCpu(threshold: number, timeoutMs: number, onWait: (share: number) => void): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let reported = false;
  for (;;) {
    const start = readCpuTimes();
    await Bun.sleep(2000);
    const share = foreignCpuShare(start, readCpuTimes(), 0);
    if (share < threshold || performance.now() >= deadline) return share;
    if (!reported) onWait(share);
    reported = true;
  }
}
