// The SDK batch measurement (scripts/bench-sdk.ts) as a bench step: one run, its result and how much
// other processes used the CPU meanwhile.
import { join } from "node:path";
import { describeFailure, runCommand } from "./process.ts";

const REPO_ROOT = join(import.meta.dir, "..", "..");
const SCRIPT = join(REPO_ROOT, "scripts", "bench-sdk.ts");
const TIMEOUT_MS = 15 * 60_000;

export interface SdkBatchResult {
  prompts: number;
  tokensPerPrompt: number;
  batchSeconds: number;
  sequentialSeconds: number;
  speedup: number;
  foreignCpuShare: number;
}

export function sdkBenchArgs(model: string, threads: number): string[] {
  return [process.execPath, SCRIPT, "--model", model, "--threads", String(threads)];
}

export async function runSdkBatch(model: string, threads: number): Promise<SdkBatchResult> {
  const result = await runCommand(sdkBenchArgs(model, threads), { cwd: REPO_ROOT, timeoutMs: TIMEOUT_MS });
  if (result.exitCode !== 0) throw new Error(describeFailure("bench-sdk.ts", result));
  const line = result.stdout.trim().split("\n").reverse().find((l) => l.startsWith("{"));
  if (!line) throw new Error(`bench-sdk.ts printed no result line: ${result.stdout.trim().slice(-200) || "(empty)"}`);
  return { ...(JSON.parse(line) as Omit<SdkBatchResult, "foreignCpuShare">), foreignCpuShare: result.foreignCpuShare };
}

/** The report's line for one model, e.g. "SDK llm.chat, 16 prompts × 32 tokens: 2.1 s batched vs 6.3 s one by one (3.0×)". */
export function sdkBatchNote(model: string, r: SdkBatchResult): string {
  return `${model}: SDK llm.chat, ${r.prompts} prompts × ${r.tokensPerPrompt} tokens: ${r.batchSeconds.toFixed(2)} s batched vs `
    + `${r.sequentialSeconds.toFixed(2)} s one call at a time (${r.speedup.toFixed(2)}× faster)`;
}
