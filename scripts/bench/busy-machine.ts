// `make bench` part "busy" (issue 31, item 9): one streaming client's decode rate while another process
// keeps one core busy (a spinning shell pinned to core 0 with taskset), each server at its own default
// thread count: llamux (which then picks its thread count by measuring, src/engine/thread-governor.ts),
// llamux with --threads fixed at the physical cores (its former default, llama-server's default count),
// and llama-server (when `make llama-tools` built it). The same runs without the hog give the idle rate.
// Run alone: bun scripts/bench/busy-machine.ts [--model PATH] [--runs N] [--tokens N]
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { physicalCoreCount } from "../../ffi/hardware.ts";
import { ensureModel } from "../gen-models.ts";
import { LLAMA_SERVER, defaultLlamuxCommand, startServer, streamRequest, type LlamuxCommand, type ServerKind, type ServerSpec } from "./server.ts";

export interface BusyMachineOptions {
  runs: number;
  /** Tokens generated per request. */
  tokens: number;
  llamux: LlamuxCommand;
  log?: (line: string) => void;
}

interface Contender {
  label: string;
  kind: ServerKind;
  threads: ServerSpec["threads"];
}

/** A process that keeps one core busy: a shell loop, pinned to core 0 when taskset is there. */
function startHog(): ReturnType<typeof Bun.spawn> {
  const loop = ["sh", "-c", "while :; do :; done"];
  const pinned = existsSync("/usr/bin/taskset") ? ["taskset", "-c", "0", ...loop] : loop;
  return Bun.spawn(pinned, { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
}

/** Decode tokens per second of one streamed request: tokens after the first over the time after the first. */
async function decodeRate(baseUrl: string, model: string, tokens: number): Promise<number> {
  const timing = await streamRequest(baseUrl, "/v1/completions", { model, prompt: "Count to a thousand:", max_tokens: tokens, temperature: 1, top_k: 40, ignore_eos: true });
  const first = timing.chunkTimes[0] ?? timing.endAt;
  return Math.max(0, timing.completionTokens - 1) / ((timing.endAt - first) / 1000);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? 0;

export async function runBusyMachine(modelPath: string, options: BusyMachineOptions): Promise<{ markdown: string; json: unknown }> {
  const log = options.log ?? (() => {});
  const cores = physicalCoreCount();
  const contenders: Contender[] = [
    { label: "llamux (default: measured thread count)", kind: "llamux", threads: "default" },
    { label: `llamux --threads ${cores} (fixed)`, kind: "llamux", threads: cores },
    ...(existsSync(LLAMA_SERVER) ? [{ label: "llama-server (default)", kind: "llama-server" as const, threads: "default" as const }] : []),
  ];
  const results: Array<{ label: string; idle: number; busy: number }> = [];
  for (const contender of contenders) {
    const spec: ServerSpec = { model: modelPath, threads: contender.threads, parallel: 1, llamux: options.llamux, contextPerSequence: 1024 };
    const server = await startServer(contender.kind, spec);
    try {
      const rates = { idle: [] as number[], busy: [] as number[] };
      for (let run = 0; run < options.runs; run++) {
        rates.idle.push(await decodeRate(server.baseUrl, modelPath, options.tokens));
        const hog = startHog();
        try {
          rates.busy.push(await decodeRate(server.baseUrl, modelPath, options.tokens));
        } finally {
          hog.kill("SIGKILL");
          await hog.exited;
        }
        log(`${contender.label}: idle ${rates.idle.at(-1)!.toFixed(1)} t/s, with a hog on core 0 ${rates.busy.at(-1)!.toFixed(1)} t/s`);
      }
      results.push({ label: contender.label, idle: median(rates.idle), busy: median(rates.busy) });
    } finally {
      await server.stop();
    }
  }
  const rows = results.map((r) => `| ${r.label} | ${r.idle.toFixed(1)} | ${r.busy.toFixed(1)} | ${(r.busy / r.idle).toFixed(2)} |`);
  const markdown = [
    `### A busy machine: one client's decode rate with a CPU hog on core 0 (${cores} physical cores, ${options.tokens} tokens, median of ${options.runs})`,
    "",
    "| server | idle t/s | hog on one core t/s | kept |",
    "|---|---|---|---|",
    ...rows,
    ...(existsSync(LLAMA_SERVER) ? [] : ["", "llama-server not built (make llama-tools): llamux only."]),
  ].join("\n");
  return { markdown, json: { cores, tokens: options.tokens, runs: options.runs, results } };
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { model: { type: "string" }, runs: { type: "string" }, tokens: { type: "string" } } });
  const model = values.model ?? await ensureModel("lfm2-350m-q4_0");
  const result = await runBusyMachine(model, {
    runs: Number(values.runs ?? 3), tokens: Number(values.tokens ?? 64), llamux: defaultLlamuxCommand(), log: (line) => console.error(line),
  });
  console.log(result.markdown);
}
