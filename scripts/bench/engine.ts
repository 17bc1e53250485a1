// llamux's own engine, measured by scripts/bench-engine.ts (one JSON line per run) on a chosen library set.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describeFailure, runCommand } from "./process.ts";

const REPO_ROOT = join(import.meta.dir, "..", "..");
export const ENGINE_BENCH_SCRIPT = join(REPO_ROOT, "scripts", "bench-engine.ts");
const TIMEOUT_MS = 15 * 60_000;

export type EngineRun =
  | { mode: "pp"; prompt: number }
  | { mode: "tg"; tokens: number; sampling?: "greedy" | "top-k" | "full" | "top-p" }
  | { mode: "batch"; parallel: number; prompt: number; tokens: number };

export function engineBenchAvailable(): boolean {
  return existsSync(ENGINE_BENCH_SCRIPT);
}

export function engineBenchArgs(model: string, threads: number, run: EngineRun): string[] {
  const args = [process.execPath, ENGINE_BENCH_SCRIPT, "--model", model, "--threads", String(threads), "--mode", run.mode];
  if (run.mode === "pp") args.push("--prompt", String(run.prompt));
  else if (run.mode === "tg") args.push("--tokens", String(run.tokens), ...(run.sampling ? ["--sampling", run.sampling] : []));
  else args.push("--parallel", String(run.parallel), "--prompt", String(run.prompt), "--tokens", String(run.tokens));
  return args;
}

export interface EngineResult {
  tokensPerSecond: number;
  foreignCpuShare: number;
}

/** One engine run, with the engine loading its libraries from `libraryDir`. */
export async function runEngine(model: string, threads: number, run: EngineRun, libraryDir: string): Promise<EngineResult> {
  const argv = engineBenchArgs(model, threads, run);
  const result = await runCommand(argv, { cwd: REPO_ROOT, timeoutMs: TIMEOUT_MS, env: { LLAMUX_LIB_DIR: libraryDir } });
  if (result.exitCode !== 0) throw new Error(describeFailure("bench-engine.ts", result));
  return { tokensPerSecond: parseEngineOutput(result.stdout), foreignCpuShare: result.foreignCpuShare };
}

/** The last JSON line on stdout carries the result, e.g. {"mode":"tg","tokensPerSecond":112.3}. */
export function parseEngineOutput(stdout: string): number {
  const lines = stdout.trim().split("\n").reverse();
  for (const line of lines) {
    if (!line.startsWith("{")) continue;
    const record = JSON.parse(line) as { tokensPerSecond?: unknown };
    if (typeof record.tokensPerSecond === "number" && Number.isFinite(record.tokensPerSecond)) return record.tokensPerSecond;
  }
  throw new Error(`bench-engine.ts printed no {"tokensPerSecond": ...} line: ${stdout.trim().slice(-200) || "(empty)"}`);
}
