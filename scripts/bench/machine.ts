// What the numbers were measured on: they only compare within one machine, so the report says which.
import { existsSync, readFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";

export interface MachineInfo {
  cpuModel: string;
  logicalCores: number;
  cpuFlags: string[]; // the SIMD extensions that decide which ggml kernels run
  memoryGiB: number;
  loadAverage: number[]; // other users of a shared machine show up here
  os: string;
  bunVersion: string;
  llamaCppRelease: string;
}

const SIMD_FLAGS = ["sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_tile", "asimd", "sve"];

export function machineInfo(): MachineInfo {
  const cpuinfo = existsSync("/proc/cpuinfo") ? readFileSync("/proc/cpuinfo", "utf8") : "";
  const field = (name: string) => cpuinfo.match(new RegExp(`^${name}\\s*:\\s*(.*)$`, "m"))?.[1]?.trim();
  const flags = new Set((field("flags") ?? field("Features") ?? "").split(/\s+/));
  return {
    cpuModel: field("model name") ?? cpus()[0]?.model ?? "unknown",
    logicalCores: availableParallelism(),
    cpuFlags: SIMD_FLAGS.filter((f) => flags.has(f)),
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    loadAverage: loadavg().map((l) => Number(l.toFixed(2))),
    os: `${process.platform}-${process.arch}`,
    bunVersion: Bun.version,
    llamaCppRelease: pinnedRelease(),
  };
}

function pinnedRelease(): string {
  const pins = join(import.meta.dir, "..", "native-packages.json");
  if (!existsSync(pins)) return "unknown";
  return (JSON.parse(readFileSync(pins, "utf8")) as { llamaCppRelease?: string }).llamaCppRelease ?? "unknown";
}
