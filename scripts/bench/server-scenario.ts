// `bun scripts/bench.ts --only server`: llamux profile b beside llama-server (same source, same model,
// same threads, 8 sequences, same sampler chain in every request), repetitions interleaved and the order
// alternated, reported as ratios of medians. Each llamux build (release and `make binary` executables, or
// the checkout) is measured in the same runs against the same llama-server. Goals from issue 19 beside each
// row; issue 41's table is drawn from these samples by goal-table.ts.
import { runBatchedBench } from "./llama-tools.ts";
import {
  type ConstrainedMode, type LoadResult, type LoadShape, type RunningServer, type SamplerChainName, type ServerKind, type ServerSpec,
  LLAMA_SERVER, percentile, runConstrained, runLoad, showCommand, startServer,
} from "./server.ts";
import { summarize } from "./stats.ts";
import { type LlamuxBuild, buildName } from "./llamux-builds.ts";

/** How much one run measures: every row of the record (FULL_SIZES), or the goal table's rows only (QUICK_SIZES). */
export interface ScenarioSizes {
  /** spawn to the first answer, each server at its default context */
  coldStart: boolean;
  loads: Array<{ clients: number; chain: SamplerChainName }>;
  constrained: ConstrainedMode[];
  /** requests per constrained mode per run, each with its own seed; their tokens over their time is one sample */
  constrainedRequests: number;
}

export const FULL_SIZES: ScenarioSizes = {
  coldStart: true,
  loads: [{ clients: 1, chain: "top-k" }, { clients: 1, chain: "full" }, { clients: 8, chain: "top-k" }, { clients: 8, chain: "full" }],
  constrained: ["none", "json-schema", "tool-call", "tool-grammar"],
  constrainedRequests: 4,
};

/**
 * What issue 41's table needs: 1 and 8 clients at top-k 40, 1 client on the whole vocabulary, a schema and a
 * forced call, both as each server forces it and with the same grammar on both (llama-server's "required"
 * grammar leaves this model free to answer without a call, so only the second compares like with like).
 */
export const QUICK_SIZES: ScenarioSizes = {
  coldStart: false,
  loads: [{ clients: 1, chain: "top-k" }, { clients: 1, chain: "full" }, { clients: 8, chain: "top-k" }],
  constrained: ["json-schema", "tool-call", "tool-grammar"],
  constrainedRequests: 2,
};

export interface ServerScenarioOptions {
  runs: number;
  threads: number;
  parallel: number;
  promptTokens: number;
  outputTokens: number;
  requestsPerClient: number;
  /** Each llamux measured, beside one llama-server (the static build from the same source) per run. */
  builds: LlamuxBuild[];
  sizes: ScenarioSizes;
  log: (line: string) => void;
}

/** The key of llama-server's samples. */
export const LLAMA_SERVER_ID = "llama-server";
/** Tokens of context per sequence on both servers during the loads (llamux's default on every profile). */
const LOAD_CONTEXT = 4096;

/** Every sample of one model's scenario, keyed by server: "llama-server" or a build's id. */
export interface ScenarioSamples {
  coldStartMs: Map<string, number[]>;
  load: Map<string, LoadResult[]>; // `${server} ${clients} ${chain}`
  constrained: Map<string, number[]>; // `${server} ${mode}` -> t/s
  toolCallsReturned: Map<string, boolean[]>; // per forced tool-call request: did the reply carry a call
  batchedBench: Map<number, number[]>; // batch size -> S_TG t/s (decoding only)
  batchedBenchEndToEnd: Map<number, number[]>; // batch size -> generated tokens over prompts + decoding
  failures: string[];
}

/** Appends one sample to a key's list. */
function addSample<K, V>(samples: Map<K, V[]>, key: K, value: V): void {
  const list = samples.get(key);
  if (list) list.push(value);
  else samples.set(key, [value]);
}

const loadKey = (server: string, clients: number, chain: SamplerChainName) => `${server} ${clients} ${chain}`;

async function attempt(samples: ScenarioSamples, what: string, log: (line: string) => void, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    const message = `${what}: ${(error as Error).message}`;
    samples.failures.push(message);
    log(`  FAILED ${message}`);
  }
}

interface Contender {
  id: string;
  kind: ServerKind;
  spec: ServerSpec;
}

export interface ServerScenarioResult {
  markdown: string;
  json: unknown;
  commands: string[];
  samples: ScenarioSamples;
}

export async function runServerScenario(modelName: string, modelPath: string, vocabularySize: number, o: ServerScenarioOptions): Promise<ServerScenarioResult> {
  const base = { model: modelPath, threads: o.threads, parallel: o.parallel };
  const contenders: Contender[] = [
    { id: LLAMA_SERVER_ID, kind: "llama-server", spec: { ...base, llamux: { command: [], env: {} } } },
    ...o.builds.map((build): Contender => ({ id: build.id, kind: "llamux", spec: { ...base, llamux: build } })),
  ];
  const samples: ScenarioSamples = {
    coldStartMs: new Map(), load: new Map(), constrained: new Map(), toolCallsReturned: new Map(), batchedBench: new Map(), batchedBenchEndToEnd: new Map(), failures: [],
  };
  for (let round = 1; round <= o.runs; round++) {
    // llama-server first in odd runs, last in even ones
    const order = round % 2 === 1 ? contenders : [...contenders].reverse();
    o.log(`[server run ${round}/${o.runs}] ${modelName}: ${order.map((c) => c.id).join(", ")}`);
    if (o.sizes.coldStart) {
      // Cold start: each server at its default context, spawn to the first answered completion.
      for (const c of order) {
        await attempt(samples, `${c.id} cold start`, o.log, async () => {
          const server = await startServer(c.kind, c.spec);
          await server.stop();
          addSample(samples.coldStartMs, c.id, server.readyMs);
          o.log(`  ${c.id.padEnd(16)} cold start ${server.readyMs.toFixed(0)} ms`);
        });
      }
    }
    for (const c of order) {
      let server: RunningServer | undefined;
      await attempt(samples, `${c.id} load`, o.log, async () => {
        // the loads: the same context on both servers (the cold start keeps each one's default)
        server = await startServer(c.kind, { ...c.spec, contextPerSequence: LOAD_CONTEXT });
        // Warm-up: first decodes page in weights and allocate buffers.
        await runLoad(server, modelPath, vocabularySize, { clients: 1, requestsPerClient: 1, promptTokens: 16, outputTokens: 4, chain: "top-k" }, 1);
      });
      if (!server) continue;
      for (const { clients, chain } of o.sizes.loads) {
        const shape: LoadShape = { clients, chain, requestsPerClient: o.requestsPerClient, promptTokens: o.promptTokens, outputTokens: o.outputTokens };
        await attempt(samples, `${c.id} ${clients} client(s) ${chain}`, o.log, async () => {
          const result = await runLoad(server!, modelPath, vocabularySize, shape, round * 100_000 + clients * 10_000 + (chain === "full" ? 5000 : 0));
          addSample(samples.load, loadKey(c.id, clients, chain), result);
          o.log(`  ${c.id.padEnd(16)} ${clients} client(s) ${chain.padEnd(5)} ${result.tokensPerSecond.toFixed(1)} t/s, TTFT p50 ${percentile(result.ttftMs, 50).toFixed(0)} ms, ITL p50 ${percentile(result.interTokenMs, 50).toFixed(1)} ms`);
        });
      }
      for (const mode of o.sizes.constrained) {
        await attempt(samples, `${c.id} constrained ${mode}`, o.log, async () => {
          // Several requests, each with its own seed, pooled: with random weights the text, and so how many
          // sampled tokens the grammar rejects, changes with the seed (one request's rate swung ±6%).
          let tokens = 0;
          let seconds = 0;
          const called: boolean[] = [];
          for (let i = 0; i < o.sizes.constrainedRequests; i++) {
            const r = await runConstrained(server!, modelPath, mode, o.outputTokens, round * 100 + i);
            tokens += r.tokens;
            seconds += r.seconds;
            called.push(r.called);
            if (mode === "tool-call") addSample(samples.toolCallsReturned, c.id, r.called);
          }
          addSample(samples.constrained, `${c.id} ${mode}`, tokens / seconds);
          o.log(`  ${c.id.padEnd(16)} constrained ${mode.padEnd(12)} ${(tokens / seconds).toFixed(1)} t/s over ${tokens} tokens in ${o.sizes.constrainedRequests} requests${mode.startsWith("tool") ? `, ${called.filter(Boolean).length} with a call` : ""}`);
        });
      }
      await server.stop();
    }
    await attempt(samples, "llama-batched-bench", o.log, async () => {
      const r = await runBatchedBench(modelPath, o.threads, { prompt: o.promptTokens, generate: o.outputTokens, batchSizes: [1, o.parallel] });
      for (const [batch, speed] of r.decodeTokensPerSecond) addSample(samples.batchedBench, batch, speed);
      for (const [batch, speed] of r.endToEndTokensPerSecond) addSample(samples.batchedBenchEndToEnd, batch, speed);
      o.log(`  llama-batched-bench ${[...r.decodeTokensPerSecond].map(([b, s]) => `B=${b} ${s.toFixed(1)} (with prompts ${r.endToEndTokensPerSecond.get(b)?.toFixed(1)})`).join("  ")} t/s`);
    });
  }
  const commands = contenders.flatMap((c) => [
    ...(o.sizes.coldStart ? [showCommand(c.kind, c.spec)] : []),
    showCommand(c.kind, { ...c.spec, contextPerSequence: LOAD_CONTEXT }),
  ]);
  const markdown = o.builds.map((build) => renderMarkdown(modelName, samples, o, build)).join("\n\n");
  return { markdown, json: toJson(samples), commands, samples };
}

const median = (values: number[]) => summarize(values)?.median;

/** The median over runs of one load's figure (`server`: "llama-server" or a build's id). */
export function loadMedian(samples: ScenarioSamples, server: string, clients: number, chain: SamplerChainName, pick: (r: LoadResult) => number): number | undefined {
  return median((samples.load.get(loadKey(server, clients, chain)) ?? []).map(pick));
}

export function constrainedMedian(samples: ScenarioSamples, server: string, mode: ConstrainedMode): number | undefined {
  return median(samples.constrained.get(`${server} ${mode}`) ?? []);
}

/** llama-batched-bench's generated tokens over prompts + decoding at `batch` sequences: the engine limit for the loads' work. */
export function engineLimit(samples: ScenarioSamples, batch: number): number | undefined {
  return median(samples.batchedBenchEndToEnd.get(batch) ?? []);
}

interface Row {
  measure: string;
  llamaServer?: number;
  llamux?: number;
  unit: string;
  ratio?: number;
  goal: string;
  pass?: boolean;
}

function renderMarkdown(modelName: string, s: ScenarioSamples, o: ServerScenarioOptions, build: LlamuxBuild): string {
  const rows: Row[] = [];
  const both = (measure: string, unit: string, value: (server: string) => number | undefined, goal: string, higherIsBetter: boolean | undefined) => {
    const llamaServer = value(LLAMA_SERVER_ID);
    const llamux = value(build.id);
    if (llamaServer === undefined && llamux === undefined) return; // not measured at these sizes
    const ratio = llamaServer !== undefined && llamux !== undefined && llamaServer > 0 ? llamux / llamaServer : undefined;
    const pass = ratio === undefined || higherIsBetter === undefined ? undefined : higherIsBetter ? ratio >= 1 : ratio <= 1;
    rows.push({ measure, llamaServer, llamux, unit, ratio, goal, pass });
  };
  both("cold start: spawn → first answer, each at its default context", "ms", (k) => median(s.coldStartMs.get(k) ?? []), "≤ 1.0×", false);
  for (const clients of [1, 8]) {
    both(`${clients} client(s), top-k 40: throughput`, "t/s", (k) => loadMedian(s, k, clients, "top-k", (r) => r.tokensPerSecond), clients === 8 ? "≥ 1.0×" : "", clients === 8 ? true : undefined);
    both(`${clients} client(s), top-k 40: TTFT p50`, "ms", (k) => loadMedian(s, k, clients, "top-k", (r) => percentile(r.ttftMs, 50)), "≤ 1.0×", false);
    both(`${clients} client(s), top-k 40: TTFT p99`, "ms", (k) => loadMedian(s, k, clients, "top-k", (r) => percentile(r.ttftMs, 99)), "", undefined);
    both(`${clients} client(s), top-k 40: inter-token p50`, "ms", (k) => loadMedian(s, k, clients, "top-k", (r) => percentile(r.interTokenMs, 50)), "", undefined);
    both(`${clients} client(s), top-k 40: inter-token p99`, "ms", (k) => loadMedian(s, k, clients, "top-k", (r) => percentile(r.interTokenMs, 99)), "", undefined);
    both(`${clients} client(s), vLLM defaults (whole vocabulary): throughput`, "t/s", (k) => loadMedian(s, k, clients, "full", (r) => r.tokensPerSecond), "", undefined);
  }
  const lines = [
    `### ${modelName}: whole server, llamux profile b (${buildName(build)}) vs llama-server`,
    "",
    `llamux: the ${build.what}, on the ${build.libraries} llama.cpp libraries; llama-server is built from the same source. ${o.runs} interleaved run(s), medians; ${o.parallel} sequences, ${o.threads} threads; each client sends ${o.requestsPerClient} streaming /v1/completions of ${o.promptTokens} random prompt tokens → ${o.outputTokens} tokens (ignore_eos), same sampler chain in every request. Throughput counts the completion tokens of the usage chunk over the wall time of the whole load.`,
    "",
    "| measure | llama-server | llamux | llamux ÷ llama-server | goal |",
    "|---|---:|---:|---:|---|",
    ...rows.map((r) => `| ${r.measure} | ${fmt(r.llamaServer, r.unit)} | ${fmt(r.llamux, r.unit)} | ${r.ratio === undefined ? "–" : `${r.ratio.toFixed(2)}×`} | ${r.goal}${r.pass === undefined ? "" : r.pass ? " PASS" : " FAIL"} |`),
    "",
    "| ratio (same server, same run) | llama-server | llamux | goal |",
    "|---|---:|---:|---|",
  ];
  for (const clients of [1, 8]) {
    const ratio = (k: string) => {
      const full = loadMedian(s, k, clients, "full", (r) => r.tokensPerSecond);
      const topK = loadMedian(s, k, clients, "top-k", (r) => r.tokensPerSecond);
      return full !== undefined && topK ? full / topK : undefined;
    };
    const llamux = ratio(build.id);
    const server = ratio(LLAMA_SERVER_ID);
    if (llamux === undefined && server === undefined) continue;
    lines.push(`| ${clients} client(s): vLLM defaults ÷ top-k 40 throughput | ${fmtRatio(server)} | ${fmtRatio(llamux)} | ${clients === 1 ? `≥ 0.97${llamux === undefined ? "" : llamux >= 0.97 ? " PASS" : " FAIL"}` : ""} |`);
  }
  // Two engine figures: the server's throughput counts its whole load (every prompt, then every output),
  // so the limit for the same work is llama-batched-bench's generated tokens over prompts + decoding; its
  // decode-only rate (S_TG) leaves the prompts out and is shown beside it, without a goal.
  for (const clients of [1, o.parallel]) {
    for (const [engine, what, judged] of [
      [engineLimit(s, clients), "generated tokens over prompts + decoding: the same work, the engine limit", true],
      [median(s.batchedBench.get(clients) ?? []), "decoding only (S_TG), prompts left out", false],
    ] as const) {
      const fraction = (k: string) => {
        const t = loadMedian(s, k, clients, "top-k", (r) => r.tokensPerSecond);
        return t !== undefined && engine ? t / engine : undefined;
      };
      const llamux = fraction(build.id);
      const goal = judged && clients === o.parallel ? `≥ 0.95${llamux === undefined ? "" : llamux >= 0.95 ? " PASS" : " FAIL"}` : "";
      lines.push(`| ${clients} client(s) throughput ÷ llama-batched-bench B=${clients}, ${what} (${fmt(engine, "t/s")}) | ${fmtRatio(fraction(LLAMA_SERVER_ID))} | ${fmtRatio(llamux)} | ${goal} |`);
    }
  }
  lines.push("", `Constrained decoding, 1 client, chat completion, top-k 40, ${o.sizes.constrainedRequests} requests per run with their own seeds, completion tokens over the time of the whole requests (random weights are the worst case: many sampled tokens break the grammar and are resampled):`, "",
    "| constraint | llama-server t/s | llamux t/s | llamux ÷ llama-server | llamux ÷ its unconstrained rate | goal |", "|---|---:|---:|---:|---:|---|");
  const unconstrained = constrainedMedian(s, build.id, "none");
  const callsReturned = (k: string) => {
    const returned = s.toolCallsReturned.get(k) ?? [];
    return `${returned.filter(Boolean).length} of ${returned.length} replies carried a call`;
  };
  const label: Record<ConstrainedMode, string> = {
    none: "none (ignore_eos)",
    "json-schema": "JSON schema (llama-server: json_schema)",
    "tool-call": `forced tool call (tool_choice "required", one tool; llama-server: ${callsReturned(LLAMA_SERVER_ID)}, llamux: ${callsReturned(build.id)})`,
    "tool-grammar": "the same forced-call grammar on both (llamux's, via each server's grammar field, /v1/completions)",
  };
  for (const mode of o.sizes.constrained) {
    const server = constrainedMedian(s, LLAMA_SERVER_ID, mode);
    const llamux = constrainedMedian(s, build.id, mode);
    const ratio = server && llamux !== undefined ? llamux / server : undefined;
    const own = unconstrained && llamux !== undefined ? llamux / unconstrained : undefined;
    const goal = mode === "none" ? "" : `≥ 1.0×${ratio === undefined ? "" : ratio >= 1 ? " PASS" : " FAIL"}`;
    lines.push(`| ${label[mode]} | ${fmt(server, "")} | ${fmt(llamux, "")} | ${fmtRatio(ratio)} | ${fmtRatio(own)} | ${goal} |`);
  }
  if (s.failures.length > 0) lines.push("", "Failures:", ...s.failures.map((f) => `- ${f}`));
  lines.push("", `llama-server: ${LLAMA_SERVER.replace(/^.*\/\.native\//, ".native/")} (\`make llama-tools\`).`);
  return lines.join("\n");
}

const fmt = (value: number | undefined, unit: string) => (value === undefined ? "–" : `${value >= 100 ? value.toFixed(0) : value.toFixed(1)}${unit ? ` ${unit}` : ""}`);
const fmtRatio = (value: number | undefined) => (value === undefined ? "–" : `${value.toFixed(2)}×`);

function toJson(s: ScenarioSamples): unknown {
  return {
    coldStartMs: Object.fromEntries(s.coldStartMs),
    load: Object.fromEntries([...s.load].map(([key, results]) => [key, results.map((r) => ({
      tokensPerSecond: r.tokensPerSecond, ttftP50: percentile(r.ttftMs, 50), ttftP99: percentile(r.ttftMs, 99),
      itlP50: percentile(r.interTokenMs, 50), itlP99: percentile(r.interTokenMs, 99),
    }))])),
    constrained: Object.fromEntries(s.constrained),
    toolCallsReturned: Object.fromEntries(s.toolCallsReturned),
    batchedBench: Object.fromEntries(s.batchedBench),
    batchedBenchEndToEnd: Object.fromEntries(s.batchedBenchEndToEnd),
    failures: s.failures,
  };
}
