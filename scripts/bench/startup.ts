// Start-up of the release executable: from spawning `llamux serve` to the first answered request
// (no model loaded), median of several runs. The first run also extracts the embedded libraries into a
// fresh cache directory and is reported on its own; the later ones reuse that copy, as every start after
// the first does on a user's machine.
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { summarize } from "./stats.ts";
import { freePort } from "./free-port.ts";

export interface StartupResult {
  binary: string;
  sizeBytes: number;
  /** the first start, extracting the libraries */
  firstMs: number;
  /** the later starts */
  samplesMs: number[];
  medianMs: number;
}


/** Milliseconds from spawn until GET /health on profile b answers 200. */
async function timeOneStart(binary: string, cacheDir: string, timeoutMs = 60_000): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = Bun.spawn([binary, "serve", "--profile", "b", "--host", "127.0.0.1", "--port", String(port)], {
    env: { ...process.env, LLAMUX_CACHE_DIR: cacheDir, LLAMUX_LOG_LEVEL: "warn", LLAMUX_PERSONA: "llamux" },
    stdout: "ignore",
    stderr: "pipe",
  });
  try {
    while (performance.now() - started < timeoutMs) {
      if (child.exitCode !== null) throw new Error(`${binary} exited with ${child.exitCode}: ${await new Response(child.stderr).text()}`);
      try {
        const response = await fetch(`http://127.0.0.1:${port}/health`);
        if (response.ok) return performance.now() - started;
      } catch {
        // not listening yet
      }
      await Bun.sleep(2);
    }
    throw new Error(`${binary} did not answer within ${timeoutMs / 1000} s`);
  } finally {
    child.kill("SIGTERM");
    await child.exited;
  }
}

export async function measureStartup(binary: string, runs: number): Promise<StartupResult> {
  if (!existsSync(binary)) throw new Error(`no executable at ${binary}: run "make binary" first`);
  if (runs < 1) throw new Error("start-up needs at least one run");
  const cacheDir = mkdtempSync(join(tmpdir(), "llamux-startup-"));
  try {
    const firstMs = await timeOneStart(binary, cacheDir);
    const samplesMs: number[] = [];
    for (let i = 0; i < runs; i++) samplesMs.push(await timeOneStart(binary, cacheDir));
    return { binary, sizeBytes: statSync(binary).size, firstMs, samplesMs, medianMs: summarize(samplesMs)!.median };
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }
}

export function startupSummary(result: StartupResult): string {
  const ms = (value: number) => `${value.toFixed(0)} ms`;
  return `start-up to a listening server (${relative(process.cwd(), result.binary) || result.binary}, ${(result.sizeBytes / 1024 / 1024).toFixed(1)} MiB, no model): ` +
    `median ${ms(result.medianMs)} of ${result.samplesMs.length} (${result.samplesMs.map(ms).join(", ")}); first start with library extraction ${ms(result.firstMs)}`;
}
