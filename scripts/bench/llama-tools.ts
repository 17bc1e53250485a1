// llama.cpp's own benchmark tools (built by `make llama-tools`): the yardstick llamux is measured against.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describeFailure, runCommand } from "./process.ts";

// LLAMUX_TOOLS_DIR points elsewhere: the GPU check builds the tools beside its own libraries.
export const TOOLS_DIR = process.env.LLAMUX_TOOLS_DIR || join(import.meta.dir, "..", "..", ".native", "tools");
const LLAMA_BENCH = join(TOOLS_DIR, "llama-bench");
const BATCHED_BENCH = join(TOOLS_DIR, "llama-batched-bench");
const LLAMA_SERVER = join(TOOLS_DIR, "llama-server");
const TIMEOUT_MS = 15 * 60_000;

export function toolsBuilt(): boolean {
  return existsSync(LLAMA_BENCH) && existsSync(BATCHED_BENCH) && existsSync(LLAMA_SERVER);
}

/** Builds the tools if missing (several minutes on 2 cores); output goes to the terminal. */
export async function ensureTools(): Promise<void> {
  if (toolsBuilt()) return;
  console.error("llama-bench / llama-batched-bench / llama-server not built yet: running `make llama-tools` (takes minutes)");
  const child = Bun.spawn(["make", "--no-print-directory", "llama-tools"], {
    cwd: join(import.meta.dir, "..", ".."),
    stdout: "inherit",
    stderr: "inherit",
  });
  if ((await child.exited) !== 0 || !toolsBuilt()) throw new Error("`make llama-tools` failed");
}

export interface LlamaBenchResult {
  pp: number; // prompt processing tokens/s at the requested prompt length
  tg: number; // single-sequence decode tokens/s
  buildCommit: string;
  backends: string;
  foreignCpuShare: number;
}

export function llamaBenchArgs(model: string, threads: number, prompt: number, generate: number): string[] {
  // -r 1: one repetition per call; the harness repeats calls itself, interleaved with llamux's runs.
  return [LLAMA_BENCH, "-m", model, "-p", String(prompt), "-n", String(generate), "-t", String(threads), "-r", "1", "-o", "json"];
}

export async function runLlamaBench(model: string, threads: number, prompt: number, generate: number): Promise<LlamaBenchResult> {
  const argv = llamaBenchArgs(model, threads, prompt, generate);
  const result = await runCommand(argv, { timeoutMs: TIMEOUT_MS });
  if (result.exitCode !== 0) throw new Error(describeFailure("llama-bench", result));
  return { ...parseLlamaBench(result.stdout, prompt, generate), foreignCpuShare: result.foreignCpuShare };
}

interface LlamaBenchRecord {
  n_prompt: number;
  n_gen: number;
  avg_ts: number;
  build_commit: string;
  backends?: string;
}

/** llama-bench -o json prints one array: a record per test (pp<prompt> has n_gen 0, tg<generate> has n_prompt 0). */
export function parseLlamaBench(stdout: string, prompt: number, generate: number): Omit<LlamaBenchResult, "foreignCpuShare"> {
  const records = JSON.parse(stdout) as LlamaBenchRecord[];
  const pp = records.find((r) => r.n_prompt === prompt && r.n_gen === 0);
  const tg = records.find((r) => r.n_prompt === 0 && r.n_gen === generate);
  if (!pp || !tg) throw new Error(`llama-bench output has no pp${prompt} and tg${generate} records`);
  return { pp: pp.avg_ts, tg: tg.avg_ts, buildCommit: pp.build_commit, backends: pp.backends ?? "" };
}

export interface BatchedBenchShape {
  prompt: number; // prompt tokens per sequence
  generate: number; // generated tokens per sequence
  batchSizes: number[]; // parallel sequences
}

export function batchedBenchArgs(model: string, threads: number, shape: BatchedBenchShape): string[] {
  // Context fits the largest batch; -no-kvu: one KV stream per sequence, as llamux's engine configures its context.
  const context = Math.max(4096, Math.max(...shape.batchSizes) * (shape.prompt + shape.generate));
  return [
    BATCHED_BENCH, "-m", model, "-c", String(context), "-b", "2048", "-ub", "512",
    "-npp", String(shape.prompt), "-ntg", String(shape.generate), "-npl", shape.batchSizes.join(","),
    "-t", String(threads), "-no-kvu", "--output-format", "jsonl",
  ];
}

export interface BatchedBenchResult {
  decodeTokensPerSecond: Map<number, number>; // aggregate decode t/s (S_TG) per batch size
  /**
   * Generated tokens over the time of the whole case (prompts then decoding: pl·tg / (t_pp + t_tg)) per
   * batch size: the rate a server doing the same work (every prompt and every output) cannot exceed.
   */
  endToEndTokensPerSecond: Map<number, number>;
  foreignCpuShare: number;
}

export async function runBatchedBench(model: string, threads: number, shape: BatchedBenchShape): Promise<BatchedBenchResult> {
  const argv = batchedBenchArgs(model, threads, shape);
  const result = await runCommand(argv, { timeoutMs: TIMEOUT_MS });
  if (result.exitCode !== 0) throw new Error(describeFailure("llama-batched-bench", result));
  const { decode, endToEnd } = parseBatchedBench(result.stdout);
  const missing = shape.batchSizes.filter((b) => !decode.has(b));
  if (missing.length > 0) throw new Error(`llama-batched-bench printed no result for batch size ${missing.join(", ")}`);
  return { decodeTokensPerSecond: decode, endToEndTokensPerSecond: endToEnd, foreignCpuShare: result.foreignCpuShare };
}

/** --output-format jsonl prints one JSON object per (pp, tg, pl) case among its log lines. */
export function parseBatchedBench(stdout: string): { decode: Map<number, number>; endToEnd: Map<number, number> } {
  const decode = new Map<number, number>();
  const endToEnd = new Map<number, number>();
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    const record = JSON.parse(line) as { pl?: number; tg?: number; speed_tg?: number; t?: number };
    if (typeof record.pl !== "number" || typeof record.speed_tg !== "number") continue;
    decode.set(record.pl, record.speed_tg);
    if (typeof record.tg === "number" && typeof record.t === "number" && record.t > 0) endToEnd.set(record.pl, (record.pl * record.tg) / record.t);
  }
  return { decode, endToEnd };
}

/** "version: 0.5.0-dev (build 1, commit de3ff81) / built with GNU 12.2.0 for Linux x86_64", from whichever tool is built. */
export async function toolsBuildInfo(): Promise<string> {
  const tool = [LLAMA_BENCH, LLAMA_SERVER].find((path) => existsSync(path));
  if (!tool) return "not built (make llama-tools)";
  const result = await runCommand([tool, "--version"], { timeoutMs: 30_000 });
  const lines = (result.stdout + result.stderr).split("\n").filter((l) => /^(version|built with)/.test(l.trim()));
  const revision = existsSync(join(TOOLS_DIR, "SOURCE_REVISION")) ? readFileSync(join(TOOLS_DIR, "SOURCE_REVISION"), "utf8").trim() : "";
  return [...lines.map((l) => l.trim()), revision && `source ${revision}`].filter(Boolean).join("; ");
}
