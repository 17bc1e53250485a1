// Facts about the machine that pick safe defaults: the cores and CPU features the native libraries will use.
import { availableParallelism } from "node:os";
import { readFileSync } from "node:fs";

/**
 * Physical cores this process may use: llama.cpp's decode slows sharply when threads exceed cores
 * (measured here: 4 threads on 2 cores decoded 400x slower than 2), so hyper-threads do not count.
 */
export function physicalCoreCount(): number {
  const logical = availableParallelism();
  try {
    const cores = new Set<string>();
    let physicalId = "0";
    for (const line of readFileSync("/proc/cpuinfo", "utf8").split("\n")) {
      const [key, value] = line.split(":").map((s) => s.trim());
      if (key === "physical id") physicalId = value ?? "0";
      else if (key === "core id") cores.add(`${physicalId}/${value}`);
    }
    if (cores.size > 0) return Math.max(1, Math.min(cores.size, logical));
  } catch {
    // no /proc/cpuinfo (macOS): fall through
  }
  return Math.max(1, logical);
}

/** The processor's feature flags from /proc/cpuinfo (empty where there is none, as on macOS). */
export function cpuFlags(): Set<string> {
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8").split("\n").find((l) => l.startsWith("flags"));
    return new Set(line?.split(":")[1]?.trim().split(/\s+/) ?? []);
  } catch {
    return new Set();
  }
}
