// `bun scripts/bench.ts --only server`: llamux profile b beside llama-server (same source, same model,
// same threads, 8 sequences, same sampler chain in every request), repetitions interleaved and the order
// alternated, reported as ratios of medians. Goals from issue 19 beside each row.
import { runBatchedBench } from "./llama-tools.ts";
import {
  type ConstrainedMode, type LoadResult, type LoadShape, type RunningServer, type SamplerChainName, type ServerKind, type ServerSpec,
  LLAMA_SERVER, percentile, runConstrained, runLoad, serverArgv, startServer,
} from "./server.ts";
import { summarize } from "./stats.ts";
import type { LibrarySet } from "./libraries.ts";

export interface ServerScenarioOptions {
  runs: number;
  threads: number;
  parallel: number;
  promptTokens: number;
  outputTokens: number;
  requestsPerClient: number;
  llamux: string[];
  /** The llama.cpp library build llamux runs on; llama-server is always the static build from the same source. */
  libraries: LibrarySet;
  log: (line: string) => void;
}

const KINDS: ServerKind[] = ["llama-server", "llamux"];
const LOADS: Array<{ clients: number; chain: SamplerChainName }> = [
  { clients: 1, chain: "top-k" }, { clients: 1, chain: "full" }, { clients: 8, chain: "top-k" }, { clients: 8, chain: "full" },
];
/** Tokens of context per sequence on both servers during the loads (llamux's default on every profile). */
const LOAD_CONTEXT = 4096;
const CONSTRAINED: ConstrainedMode[] = ["none", "json-schema", "tool-call", "tool-grammar"];
/** Requests per constrained mode per run, each with its own seed; their tokens over their time is one sample. */
const CONSTRAINED_REQUESTS = 4;

/** Every sample of one model's scenario, keyed by server. */
interface Samples {
  coldStartMs: Record<ServerKind, number[]>;
  load: Map<string, LoadResult[]>; // `${kind} ${clients} ${chain}`
  constrained: Map<string, number[]>; // `${kind} ${mode}` -> t/s
  toolCallsReturned: Map<ServerKind, boolean[]>; // per forced tool-call request: did the reply carry a call
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

const loadKey = (kind: ServerKind, clients: number, chain: SamplerChainName) => `${kind} ${clients} ${chain}`;

async function attempt(samples: Samples, what: string, log: (line: string) => void, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    const message = `${what}: ${(error as Error).message}`;
    samples.failures.push(message);
    log(`  FAILED ${message}`);
  }
}

export async function runServerScenario(modelName: string, modelPath: string, vocabularySize: number, o: ServerScenarioOptions): Promise<{ markdown: string; json: unknown; commands: string[] }> {
  const spec: ServerSpec = { model: modelPath, threads: o.threads, parallel: o.parallel, llamux: o.llamux, llamuxLibDir: o.libraries.dir };
  // the loads: the same context on both servers (the cold start keeps each one's default)
  const loadSpec: ServerSpec = { ...spec, contextPerSequence: LOAD_CONTEXT };
  const samples: Samples = {
    coldStartMs: { "llama-server": [], llamux: [] }, load: new Map(), constrained: new Map(), toolCallsReturned: new Map(), batchedBench: new Map(), batchedBenchEndToEnd: new Map(), failures: [],
  };
  for (let round = 1; round <= o.runs; round++) {
    const order = round % 2 === 1 ? KINDS : [...KINDS].reverse();
    o.log(`[server run ${round}/${o.runs}] ${modelName}, llamux on the ${o.libraries.kind} libraries`);
    // Cold start: each server at its default context, spawn to the first answered completion.
    for (const kind of order) {
      await attempt(samples, `${kind} cold start`, o.log, async () => {
        const server = await startServer(kind, spec);
        await server.stop();
        samples.coldStartMs[kind].push(server.readyMs);
        o.log(`  ${kind.padEnd(12)} cold start ${server.readyMs.toFixed(0)} ms`);
      });
    }
    for (const kind of order) {
      let server: RunningServer | undefined;
      await attempt(samples, `${kind} load`, o.log, async () => {
        server = await startServer(kind, loadSpec);
        // Warm-up: first decodes page in weights and allocate buffers.
        await runLoad(server, modelPath, vocabularySize, { clients: 1, requestsPerClient: 1, promptTokens: 16, outputTokens: 4, chain: "top-k" }, 1);
      });
      if (!server) continue;
      for (const { clients, chain } of LOADS) {
        const shape: LoadShape = { clients, chain, requestsPerClient: o.requestsPerClient, promptTokens: o.promptTokens, outputTokens: o.outputTokens };
        await attempt(samples, `${kind} ${clients} client(s) ${chain}`, o.log, async () => {
          const result = await runLoad(server!, modelPath, vocabularySize, shape, round * 100_000 + clients * 10_000 + (chain === "full" ? 5000 : 0));
          const key = loadKey(kind, clients, chain);
          addSample(samples.load, key, result);
          o.log(`  ${kind.padEnd(12)} ${clients} client(s) ${chain.padEnd(5)} ${result.tokensPerSecond.toFixed(1)} t/s, TTFT p50 ${percentile(result.ttftMs, 50).toFixed(0)} ms, ITL p50 ${percentile(result.interTokenMs, 50).toFixed(1)} ms`);
        });
      }
      for (const mode of CONSTRAINED) {
        await attempt(samples, `${kind} constrained ${mode}`, o.log, async () => {
          // Several requests, each with its own seed, pooled: with random weights the text, and so how many
          // sampled tokens the grammar rejects, changes with the seed (one request's rate swung ±6%).
          let tokens = 0;
          let seconds = 0;
          const called: boolean[] = [];
          for (let i = 0; i < CONSTRAINED_REQUESTS; i++) {
            const r = await runConstrained(server!, modelPath, mode, o.outputTokens, round * 100 + i);
            tokens += r.tokens;
            seconds += r.seconds;
            called.push(r.called);
            if (mode === "tool-call") addSample(samples.toolCallsReturned, kind, r.called);
          }
          addSample(samples.constrained, `${kind} ${mode}`, tokens / seconds);
          o.log(`  ${kind.padEnd(12)} constrained ${mode.padEnd(12)} ${(tokens / seconds).toFixed(1)} t/s over ${tokens} tokens in ${CONSTRAINED_REQUESTS} requests${mode.startsWith("tool") ? `, ${called.filter(Boolean).length} with a call` : ""}`);
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
  const commands = [spec, loadSpec].flatMap((s) => [
    `LLAMUX_LIB_DIR=${o.libraries.dir} ${serverArgv("llamux", s, 0).join(" ").replace("--port 0", "--port PORT")}`,
    serverArgv("llama-server", s, 0).join(" ").replace("--port 0", "--port PORT"),
  ]);
  return { markdown: renderMarkdown(modelName, samples, o), json: toJson(samples), commands };
}

const median = (values: number[]) => summarize(values)?.median;

function loadMedian(samples: Samples, kind: ServerKind, clients: number, chain: SamplerChainName, pick: (r: LoadResult) => number): number | undefined {
  return median((samples.load.get(loadKey(kind, clients, chain)) ?? []).map(pick));
}

interface Row {
  measure: string;
  llamaServer?: number;
  llamux?: number;
  unit: string;
  /** ratio llamux / llama-server unless given */
  ratio?: number;
  goal: string;
  pass?: boolean;
}

function renderMarkdown(modelName: string, s: Samples, o: ServerScenarioOptions): string {
  const rows: Row[] = [];
  const both = (measure: string, unit: string, value: (kind: ServerKind) => number | undefined, goal: string, higherIsBetter: boolean | undefined) => {
    const llamaServer = value("llama-server");
    const llamux = value("llamux");
    const ratio = llamaServer !== undefined && llamux !== undefined && llamaServer > 0 ? llamux / llamaServer : undefined;
    const pass = ratio === undefined || higherIsBetter === undefined ? undefined : higherIsBetter ? ratio >= 1 : ratio <= 1;
    rows.push({ measure, llamaServer, llamux, unit, ratio, goal, pass });
  };
  both("cold start: spawn → first answer, each at its default context", "ms", (k) => median(s.coldStartMs[k]), "≤ 1.0×", false);
  for (const clients of [1, 8]) {
    both(`${clients} client(s), top-k 40: throughput`, "t/s", (k) => loadMedian(s, k, clients, "top-k", (r) => r.tokensPerSecond), clients === 8 ? "≥ 1.0×" : "", clients === 8 ? true : undefined);
    both(`${clients} client(s), top-k 40: TTFT p50`, "ms", (k) => loadMedian(s, k, clients, "top-k", (r) => percentile(r.ttftMs, 50)), "≤ 1.0×", false);
    both(`${clients} client(s), top-k 40: TTFT p99`, "ms", (k) => loadMedian(s, k, clients, "top-k", (r) => percentile(r.ttftMs, 99)), "", undefined);
    both(`${clients} client(s), top-k 40: inter-token p50`, "ms", (k) => loadMedian(s, k, clients, "top-k", (r) => percentile(r.interTokenMs, 50)), "", undefined);
    both(`${clients} client(s), top-k 40: inter-token p99`, "ms", (k) => loadMedian(s, k, clients, "top-k", (r) => percentile(r.interTokenMs, 99)), "", undefined);
    both(`${clients} client(s), vLLM defaults (whole vocabulary): throughput`, "t/s", (k) => loadMedian(s, k, clients, "full", (r) => r.tokensPerSecond), "", undefined);
  }
  const lines = [
    `### ${modelName}: whole server, llamux profile b (${o.libraries.kind} libraries) vs llama-server`,
    "",
    `llamux runs on the ${o.libraries.kind} llama.cpp libraries (${o.libraries.variant}); llama-server is built from the same source. ${o.runs} interleaved run(s), medians; ${o.parallel} sequences, ${o.threads} threads; each client sends ${o.requestsPerClient} streaming /v1/completions of ${o.promptTokens} random prompt tokens → ${o.outputTokens} tokens (ignore_eos), same sampler chain in every request. Throughput counts the completion tokens of the usage chunk over the wall time of the whole load.`,
    "",
    "| measure | llama-server | llamux | llamux ÷ llama-server | goal |",
    "|---|---:|---:|---:|---|",
    ...rows.map((r) => `| ${r.measure} | ${fmt(r.llamaServer, r.unit)} | ${fmt(r.llamux, r.unit)} | ${r.ratio === undefined ? "–" : `${r.ratio.toFixed(2)}×`} | ${r.goal}${r.pass === undefined ? "" : r.pass ? " PASS" : " FAIL"} |`),
    "",
    "| ratio (same server, same run) | llama-server | llamux | goal |",
    "|---|---:|---:|---|",
  ];
  for (const clients of [1, 8]) {
    const ratio = (k: ServerKind) => {
      const full = loadMedian(s, k, clients, "full", (r) => r.tokensPerSecond);
      const topK = loadMedian(s, k, clients, "top-k", (r) => r.tokensPerSecond);
      return full !== undefined && topK ? full / topK : undefined;
    };
    const llamux = ratio("llamux");
    lines.push(`| ${clients} client(s): vLLM defaults ÷ top-k 40 throughput | ${fmtRatio(ratio("llama-server"))} | ${fmtRatio(llamux)} | ${clients === 1 ? `≥ 0.97${llamux === undefined ? "" : llamux >= 0.97 ? " PASS" : " FAIL"}` : ""} |`);
  }
  // Two engine figures: the server's throughput counts its whole load (every prompt, then every output),
  // so the limit for the same work is llama-batched-bench's generated tokens over prompts + decoding; its
  // decode-only rate (S_TG) leaves the prompts out and is shown beside it, without a goal.
  for (const clients of [1, o.parallel]) {
    for (const [engine, what, judged] of [
      [median(s.batchedBenchEndToEnd.get(clients) ?? []), "generated tokens over prompts + decoding: the same work, the engine limit", true],
      [median(s.batchedBench.get(clients) ?? []), "decoding only (S_TG), prompts left out", false],
    ] as const) {
      const fraction = (k: ServerKind) => {
        const t = loadMedian(s, k, clients, "top-k", (r) => r.tokensPerSecond);
        return t !== undefined && engine ? t / engine : undefined;
      };
      const llamux = fraction("llamux");
      const goal = judged && clients === o.parallel ? `≥ 0.95${llamux === undefined ? "" : llamux >= 0.95 ? " PASS" : " FAIL"}` : "";
      lines.push(`| ${clients} client(s) throughput ÷ llama-batched-bench B=${clients}, ${what} (${fmt(engine, "t/s")}) | ${fmtRatio(fraction("llama-server"))} | ${fmtRatio(llamux)} | ${goal} |`);
    }
  }
  lines.push("", `Constrained decoding, 1 client, chat completion, top-k 40, ${CONSTRAINED_REQUESTS} requests per run with their own seeds, completion tokens over the time of the whole requests (random weights are the worst case: many sampled tokens break the grammar and are resampled):`, "",
    "| constraint | llama-server t/s | llamux t/s | llamux ÷ llama-server | llamux ÷ its unconstrained rate | goal |", "|---|---:|---:|---:|---:|---|");
  const unconstrained = median(s.constrained.get("llamux none") ?? []);
  const callsReturned = (k: ServerKind) => {
    const returned = s.toolCallsReturned.get(k) ?? [];
    return `${returned.filter(Boolean).length} of ${returned.length} replies carried a call`;
  };
  const label: Record<ConstrainedMode, string> = {
    none: "none (ignore_eos)",
    "json-schema": "JSON schema (llama-server: json_schema)",
    "tool-call": `forced tool call (tool_choice "required", one tool; llama-server: ${callsReturned("llama-server")}, llamux: ${callsReturned("llamux")})`,
    "tool-grammar": "the same forced-call grammar on both (llamux's, via each server's grammar field, /v1/completions)",
  };
  for (const mode of CONSTRAINED) {
    const server = median(s.constrained.get(`llama-server ${mode}`) ?? []);
    const llamux = median(s.constrained.get(`llamux ${mode}`) ?? []);
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

function toJson(s: Samples): unknown {
  return {
    coldStartMs: s.coldStartMs,
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
