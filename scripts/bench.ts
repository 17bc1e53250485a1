// `make bench`: llamux's engine against llama.cpp's own llama-bench and llama-batched-bench on the
// benchmark-shaped models, interleaved, median of several runs, with the issue's targets:
// decode ≥ 95% of tg128, prompt ≥ 95% of pp512, batched decode ≥ 90% of batched-bench at 1/4/8 sequences.
// Also times the executable's start-up to a listening server (dist/llamux, built first when missing or stale),
// the decode rate at vLLM's sampling defaults against top-k 40 (sampling), and the whole server against
// llama-server (server: throughput, TTFT, inter-token latency, cold start, constrained decoding, the engine
// limit), and one client's decode rate on a busy machine (busy: a CPU hog on one core, each server at its
// default threads), and agent sessions sharing a long prefix over fewer sequences (agents: each turn's time to
// first token against a cold prefill, both servers with --cache-ram; then llamux restarted on its disk tier;
// and Claude Code's recorded requests replayed at the server's defaults), and a short request sent during
// another's long prefill (prefill: its time to first token beside llama-server's), and the agents shape over
// two replicas behind HAProxy, session affinity against round-robin (affinity).
// The server parts run the executables people run (--llamux: the release executable on the portable
// libraries and `make binary`'s on the prebuilt ones), named under every row; every goal of issues 41-43
// they check is listed first in the report with PASS/FAIL. `--quick` (make bench QUICK=1) measures issue
// 41's table on both shapes only, at the smaller sizes below. `--only engine,sampling,server,startup,busy,agents,prefill,affinity`
// picks parts. Writes <out>/<date>.md and .json and prints them.
import { basename, relative } from "node:path";
import { parseArgs } from "node:util";
import { ensureModel } from "./gen-models.ts";
import { type EngineRun, engineBenchArgs, engineBenchAvailable, runEngine } from "./bench/engine.ts";
import { LIBRARY_KINDS, type LibraryKind, type LibrarySet, findLibrarySets, refreshShim, selectLibrarySets } from "./bench/libraries.ts";
import {
  type BatchedBenchShape, batchedBenchArgs, ensureTools, llamaBenchArgs, runBatchedBench, runLlamaBench, toolsBuildInfo, toolsBuilt,
} from "./bench/llama-tools.ts";
import { waitForQuietCpu } from "./bench/cpu-load.ts";
import { runSdkBatch, sdkBatchNote } from "./bench/sdk.ts";
import { machineInfo } from "./bench/machine.ts";
import { measureStartup, startupSummary } from "./bench/startup.ts";
import { type BenchReport, type GoalRow, type Metric, SampleBook, TOOL_SOURCE, buildRows, goalResult, goalTable, markdownTable, writeReport } from "./bench/report.ts";
import { CASES, isBaseline, withBaselines, llamaServerAvailable, measurePair, pairedTable, serverArgs, type PairedSample, type SpeculativeBenchModel, type CaseName } from "./bench/speculative.ts";
import { FULL_SIZES, QUICK_SIZES, type ScenarioSamples, runServerScenario } from "./bench/server-scenario.ts";
import { runBusyMachine } from "./bench/busy-machine.ts";
import { runAgentSessions } from "./bench/agent-sessions.ts";
import { runClaudeCodeReplay } from "./bench/claude-code-replay.ts";
import { runSessionAffinity } from "./bench/session-affinity.ts";
import { runLongPrefill } from "./bench/long-prefill.ts";
import { LLAMA_SERVER } from "./bench/server.ts";
import { BINARY_PATH, LLAMUX_BUILD_KINDS, type LlamuxBuild, type LlamuxBuildKind, buildName, findLlamuxBuilds } from "./bench/llamux-builds.ts";
import { issue41Rows } from "./bench/goal-table.ts";
import { MODEL_NAMES, type ModelName } from "./models/catalog.ts";
import { readGgufHeaderSync, type GgufArray } from "../src/store/gguf.ts";
import { summarize } from "./bench/stats.ts";
import { existsSync } from "node:fs";

const REPO_ROOT = `${import.meta.dir}/..`;
const PROMPT = 512;
const GENERATE = 128;
const BATCHED: BatchedBenchShape = { prompt: 128, generate: 128, batchSizes: [1, 4, 8] };

/** The two benchmark shapes; `flag` is the command-line override of the model file. */
const BENCH_MODELS = [
  { key: "lfm2", name: "lfm2-350m-q4_0", flag: "model-lfm2" },
  { key: "llama", name: "llama-1b-q4_0", flag: "model-llama" },
] as const;

/**
 * `--quick` (make bench QUICK=1): issue 41's table on both shapes, one run, in about 11-13 minutes on 2 quiet
 * cores with both executables (about 8 with one). The estimate, from the rates of the records in
 * docs/benchmarks (2 threads; LFM2-350M: 40 t/s for one stream, 62 for 8, 38-45 for 8 copying streams;
 * Llama-1B: 13, 33, about 25):
 * - server part, per server (llama-server, then each llamux build): 8 clients × 2 requests × 64 tokens
 *   (1,024 tokens: LFM2 17 s, Llama 31 s), 1 client × 2 × 64 at top-k and on the whole vocabulary (LFM2 7 s,
 *   Llama 20 s), a JSON schema and a forced call, 2 requests × 64 tokens each (LFM2 7 s, Llama 18 s), start and
 *   warm-up (LFM2 4 s, Llama 6 s): LFM2 35 s, Llama 75 s a server; with 3 servers and llama-batched-bench at
 *   B=1 and 8 (LFM2 10 s, Llama 25 s): LFM2 about 115 s, Llama 250 s;
 * - speculative part, per llamux build: n-gram on the copying prompt against plain, 8 streams × 64 tokens,
 *   2 pairs (4 loads of 512 tokens: LFM2 11 s, Llama 17-20 s each), two servers started and warmed up
 *   (LFM2 15 s, Llama 20 s): LFM2 about 60 s, Llama 90 s a build;
 * - so 365 s + 150 s a build: 665 s with two builds, 515 s with one, plus building a stale executable (bun
 *   build --compile, 90 s of CPU: about a minute each) and the waits for a quiet machine. Generating the
 *   models and `make llama-tools` the first time are not counted.
 */
const QUICK = {
  outputTokens: 64,
  requestsPerClient: 2,
  speculative: { cases: ["ngram-copy"] as CaseName[], streams: [8], tokens: 64, pairs: 2 },
};

const METRICS: Metric[] = [
  { id: `pp${PROMPT}`, label: `prompt pp${PROMPT}`, tool: "llama-bench", target: 0.95 },
  { id: `tg${GENERATE}`, label: `decode tg${GENERATE}`, tool: "llama-bench", target: 0.95 },
  ...BATCHED.batchSizes.map((b) => ({ id: `batch${b}`, label: `batched decode B=${b}`, tool: "llama-batched-bench", target: 0.9 })),
];

const help = `Usage: bun scripts/bench.ts [options]     (make bench; make bench QUICK=1 for --quick; BENCH_ARGS="..." adds options)
  --runs N              interleaved runs per measurement, median reported (default 5); in the speculative
                        part, pairs of loads (case and baseline side by side)
  --quick               issue 41's table on both shapes, one run (unless --runs), at smaller sizes: about
                        11-13 minutes on 2 quiet cores with both executables (8 with one). The parts server
                        and speculative (unless --only), 64 tokens a request, 1 and 8 clients at top-k 40
                        and 1 client on the whole vocabulary, a JSON schema and a forced tool call, and
                        speculation on the copying prompt at 8 streams in 2 pairs, llamux only (--spec-*
                        options override)
  --models LIST         lfm2,llama (default both)
  --model-lfm2 PATH     use this GGUF instead of the generated lfm2-350m-q4_0
  --model-llama PATH    use this GGUF instead of the generated llama-1b-q4_0
  --llamux LIST         what runs as llamux in the server parts (server, speculative, busy, agents, prefill,
                        affinity), named under every row: release (dist/llamux-<version>-linux-x64, make
                        release, on the portable libraries of make llama-portable), binary (dist/llamux, make
                        binary, on the prebuilt libraries), checkout (bun src/main.ts on each --libs build);
                        default release,binary. An executable that is missing or older than the sources is
                        built first; the portable libraries are not (make llama-portable, about 5 minutes
                        on 2 cores): without them the report says the release was not measured and why.
                        The server and speculative parts run every build; the others the first one.
  --libs LIST           library builds the engine and sampling parts (and --llamux checkout) run on:
                        prebuilt,source,portable (default: each one found in .native/lib*)
  --no-build            build nothing: neither llama.cpp's tools nor the executables; what is missing is
                        named in the report with the command that builds it
  --threads N           threads for every tool and the engine (default 2)
  --out DIR             where the report goes (default bench-results)
  --max-foreign-cpu F   share of the CPU (0-1) other processes may use during a sample before it is
                        measured again; each measurement also waits for such a quiet machine (default 0.1)
  --retries N           re-measurements of a sample disturbed by other processes (default 2)
  --settle-timeout S    longest wait in seconds for a quiet machine before measuring anyway (default 120)
  --strict              exit with status 1 if any row or goal FAILs
  --only LIST           parts to run, comma-separated (default all):
                          engine    llamux's engine vs llama-bench / llama-batched-bench
                          sampling  decode at vLLM's defaults (top_k off, top_p 1) and at top-p 0.95 ÷ top-k 40
                          server    whole server: llamux profile b vs llama-server, 1 and 8 streaming clients,
                                    cold start, constrained decoding, the engine limit (needs make llama-tools)
                          startup   the executable's start-up to a listening server (no model)
                          speculative  speculative decoding: plain, draft model, target as its own draft, n-gram,
                                    n-gram on a copying prompt, on a half-copying one and on a mostly copying
                                    one; 1, 4 and 8 streams; llamux and llama-server
                          busy      one client's decode rate with a CPU hog on one core, each server at its
                                    default threads (llamux, llamux with fixed threads, llama-server)
                          agents    agent sessions: sessions sharing a long prefix over fewer sequences, each
                                    turn's time to first token against a cold prefill, both servers with
                                    --cache-ram; then llamux restarted on its disk tier (--cache-disk) and each
                                    session's next turn; and Claude Code's recorded requests replayed at the
                                    server's defaults on two templates (issue 42's goals)
                          prefill   a 20-token request sent 1 s into a 30k-token prefill: its time to first
                                    token, and alone, llamux and llama-server (tiny-llama-agent, 32k context)
                          affinity  the agents shape over 2 llamux replicas behind README's HAProxy recipe,
                                    session affinity against round-robin (issue 43; needs haproxy)
  --spec-tiny           speculative decoding on the tiny test models instead (a quick check that it runs)
  --spec-cases LIST     speculative cases to run, comma-separated (default all: plain, draft, self-draft,
                        ngram, plain-copy, ngram-copy, plain-mixed, ngram-mixed, plain-near-copy,
                        ngram-near-copy; a case's baseline is added when left out)
  --spec-tokens N       greedy tokens per stream in the speculative part (default 128)
  --spec-streams LIST   concurrent streams in the speculative part (default 1,4,8)
  --spec-llamux-only    the speculative part without llama-server (half the time; the ratios are each
                        server's speculation against its own plain decoding)
  --binary PATH         the executable whose start-up is timed (default dist/llamux, rebuilt by make binary)
  --server-binary PATH  this llamux executable as well, first, in the server parts
  --server-requests N   streaming requests per client in the server part (default 2)
  --agent-model M       the agents and affinity parts' model: a generated model's name (tiny-llama-agent
                        for a check that they run) or a GGUF path (default: the --models shapes)
  --agent-shape LIST    the agents and affinity parts: sessions,sequences,prefix tokens,tokens added a
                        turn,turns (default 8,4,12000,1500,4)
  --agent-think-ms N    the agents part: an agent's time between an answer and its next turn, sessions
                        started N / sessions ms apart (default 0: every turn at once, the worst case)
  --cache-ram MIB       the agents and affinity parts: the servers' --cache-ram (default 8192)`;

const PARTS = ["engine", "sampling", "server", "startup", "speculative", "busy", "agents", "prefill", "affinity"] as const;
/** The parts that start llamux as a server (the others run its engine in-process, or no model). */
const SERVER_PARTS: Part[] = ["server", "speculative", "busy", "agents", "prefill", "affinity"];
/** What --quick runs unless --only says otherwise: the parts behind issue 41's table. */
const QUICK_PARTS: Part[] = ["server", "speculative"];
type Part = (typeof PARTS)[number];

interface Options {
  runs: number;
  quick: boolean;
  modelKeys: string[];
  modelOverrides: Record<string, string | undefined>;
  libraryKinds?: LibraryKind[];
  threads: number;
  outputDir: string;
  strict: boolean;
  maxForeignCpuShare: number;
  retries: number;
  settleTimeoutMs: number;
  parts: Part[];
  speculativeTiny: boolean;
  speculativeCases: CaseName[];
  speculativeTokens: number;
  speculativeStreams: number[];
  speculativeLlamuxOnly: boolean;
  /** pairs of loads per speculative case */
  speculativePairs: number;
  llamuxKinds: LlamuxBuildKind[];
  build: boolean;
  binary: string | undefined;
  serverBinary: string | undefined;
  serverRequests: number;
  /** tokens each server-part request generates */
  serverOutputTokens: number;
  agentModel: string | undefined;
  agentShape: number[];
  agentThinkMs: number;
  cacheRamMiB: number;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      runs: { type: "string" }, quick: { type: "boolean" }, models: { type: "string" },
      "model-lfm2": { type: "string" }, "model-llama": { type: "string" }, libs: { type: "string" },
      threads: { type: "string" }, out: { type: "string" }, strict: { type: "boolean" }, help: { type: "boolean", short: "h" },
      "max-foreign-cpu": { type: "string" }, retries: { type: "string" }, "settle-timeout": { type: "string" },
      only: { type: "string" }, binary: { type: "string" }, "server-binary": { type: "string" }, "server-requests": { type: "string" },
      "spec-tiny": { type: "boolean" }, "spec-cases": { type: "string" }, "spec-tokens": { type: "string" }, "spec-streams": { type: "string" }, "spec-llamux-only": { type: "boolean" }, "agent-shape": { type: "string" }, "agent-think-ms": { type: "string" }, "cache-ram": { type: "string" },
      llamux: { type: "string" }, "no-build": { type: "boolean" }, "agent-model": { type: "string" },
    },
  });
  if (values.help) {
    console.log(help);
    process.exit(0);
  }
  const list = (v: string | undefined) => v?.split(",").map((s) => s.trim()).filter(Boolean);
  const quick = values.quick ?? false;
  const runs = Number(values.runs ?? (quick ? 1 : 5));
  const modelKeys = list(values.models) ?? BENCH_MODELS.map((m) => m.key);
  const libraryKinds = list(values.libs);
  const threads = Number(values.threads ?? 2);
  const maxForeignCpuShare = Number(values["max-foreign-cpu"] ?? 0.1);
  const retries = Number(values.retries ?? 2);
  const settleTimeoutSeconds = Number(values["settle-timeout"] ?? 120);
  const parts = (list(values.only) ?? (quick ? QUICK_PARTS : [...PARTS])) as Part[];
  const serverRequests = Number(values["server-requests"] ?? (quick ? QUICK.requestsPerClient : 2));
  const speculativeCases = (list(values["spec-cases"]) ?? (quick ? QUICK.speculative.cases : [...CASES])) as CaseName[];
  const speculativeTokens = Number(values["spec-tokens"] ?? (quick ? QUICK.speculative.tokens : GENERATE));
  const speculativeStreams = (list(values["spec-streams"]) ?? (quick ? QUICK.speculative.streams.map(String) : ["1", "4", "8"])).map(Number);
  const llamuxKinds = (list(values.llamux) ?? ["release", "binary"]) as LlamuxBuildKind[];
  const agentModel = values["agent-model"];
  const agentShape = (list(values["agent-shape"]) ?? ["8", "4", "12000", "1500", "4"]).map(Number);
  const agentThinkMs = Number(values["agent-think-ms"] ?? 0);
  const cacheRamMiB = Number(values["cache-ram"] ?? 8192);
  const problems = [
    !(Number.isInteger(runs) && runs >= 1) && "--runs must be a positive integer",
    !(Number.isInteger(threads) && threads >= 1) && "--threads must be a positive integer",
    !(maxForeignCpuShare > 0 && maxForeignCpuShare <= 1) && "--max-foreign-cpu must be in (0, 1]",
    !(Number.isInteger(retries) && retries >= 0) && "--retries must be a non-negative integer",
    !(settleTimeoutSeconds >= 0) && "--settle-timeout must be a number of seconds",
    ...modelKeys.filter((k) => !BENCH_MODELS.some((m) => m.key === k)).map((k) => `unknown model "${k}" (lfm2, llama)`),
    ...(libraryKinds ?? []).filter((k) => !(LIBRARY_KINDS as readonly string[]).includes(k)).map((k) => `unknown library build "${k}" (${LIBRARY_KINDS.join(", ")})`),
    ...parts.filter((p) => !PARTS.includes(p)).map((p) => `--only: unknown part "${p}" (${PARTS.join(", ")})`),
    !(Number.isInteger(serverRequests) && serverRequests >= 1) && "--server-requests must be a positive integer",
    !(agentShape.length === 5 && agentShape.every((n) => Number.isInteger(n) && n >= 1)) && "--agent-shape must be five positive integers",
    !(Number.isInteger(agentThinkMs) && agentThinkMs >= 0) && "--agent-think-ms must be a whole number of milliseconds",
    !(Number.isInteger(cacheRamMiB) && cacheRamMiB >= 0) && "--cache-ram must be a non-negative integer",
    !(Number.isInteger(speculativeTokens) && speculativeTokens >= 1) && "--spec-tokens must be a positive integer",
    !(speculativeStreams.length > 0 && speculativeStreams.every((n) => Number.isInteger(n) && n >= 1)) && "--spec-streams must be positive integers",
    ...speculativeCases.filter((c) => !CASES.includes(c)).map((c) => `--spec-cases: unknown case "${c}" (${CASES.join(", ")})`),
    ...llamuxKinds.filter((k) => !LLAMUX_BUILD_KINDS.includes(k)).map((k) => `--llamux: unknown build "${k}" (${LLAMUX_BUILD_KINDS.join(", ")})`),
    agentModel !== undefined && !agentModel.endsWith(".gguf") && !(MODEL_NAMES as readonly string[]).includes(agentModel) && `--agent-model: "${agentModel}" is neither a generated model's name nor a .gguf file`,
  ].filter(Boolean);
  if (problems.length > 0) {
    console.error(`${problems.join("\n")}\n\n${help}`);
    process.exit(2);
  }
  return {
    runs, quick, modelKeys, threads, strict: values.strict ?? false, maxForeignCpuShare, retries, settleTimeoutMs: settleTimeoutSeconds * 1000,
    modelOverrides: { lfm2: values["model-lfm2"], llama: values["model-llama"] },
    libraryKinds: libraryKinds as LibraryKind[] | undefined,
    outputDir: values.out ?? `${REPO_ROOT}/bench-results`,
    parts,
    speculativeTiny: values["spec-tiny"] ?? false,
    speculativeCases: withBaselines(speculativeCases),
    speculativeTokens,
    speculativeStreams,
    // quick: llama-server's copying cases fail at this source (see docs/benchmarks/speculative-2026-11-27.md)
    speculativeLlamuxOnly: values["spec-llamux-only"] ?? quick,
    speculativePairs: quick && values.runs === undefined ? QUICK.speculative.pairs : runs,
    llamuxKinds,
    build: !values["no-build"],
    binary: values.binary,
    serverBinary: values["server-binary"],
    serverRequests,
    serverOutputTokens: quick ? QUICK.outputTokens : BATCHED.generate,
    agentModel,
    agentShape,
    agentThinkMs,
    cacheRamMiB,
  };
}

/** The shapes' model files by name, and each name's shape key (lfm2, llama). */
async function resolveModels(options: Options): Promise<{ models: Map<string, string>; shapeOf: Map<string, string> }> {
  const models = new Map<string, string>();
  const shapeOf = new Map<string, string>();
  for (const model of BENCH_MODELS.filter((m) => options.modelKeys.includes(m.key))) {
    const override = options.modelOverrides[model.key];
    const path = override ?? (await ensureModel(model.name, { log: (line) => console.error(line) }));
    const name = override ? basename(override) : model.name;
    models.set(name, path);
    shapeOf.set(name, model.key);
  }
  return { models, shapeOf };
}

/** The agents and affinity parts' models: --agent-model (a generated model's name or a file), else the shapes'. */
async function agentModels(options: Options, shapes: Map<string, string>): Promise<Map<string, string>> {
  const chosen = options.agentModel;
  if (!chosen) return shapes;
  if (chosen.endsWith(".gguf")) return new Map([[basename(chosen), chosen]]);
  return new Map([[chosen, await ensureModel(chosen as ModelName, { log: (line) => console.error(line) })]]);
}

/** What one measurement produced: how disturbed it was, and how to record it if it is kept. */
interface Measurement {
  foreignCpuShare: number;
  record: () => void;
  summary: string; // progress line
}

/**
 * Runs measurements on a quiet machine: waits for other processes to calm down first, and measures again
 * when they disturbed the run anyway. A failure is noted once and its cell skipped later (it would fail again).
 */
class Measurer {
  readonly book = new SampleBook();
  readonly notes: string[] = [];
  /** the server part's samples, per model, for the JSON report */
  readonly serverJson: Record<string, unknown> = {};
  private readonly failed = new Set<string>();
  constructor(private readonly options: Pick<Options, "maxForeignCpuShare" | "retries" | "settleTimeoutMs">) {}

  async measure(what: string, run: () => Promise<Measurement>): Promise<void> {
    if (this.failed.has(what)) return;
    const { maxForeignCpuShare, retries, settleTimeoutMs } = this.options;
    try {
      for (let attempt = 0; ; attempt++) {
        await waitForQuietCpu(maxForeignCpuShare, settleTimeoutMs, (share) =>
          console.error(`  (other processes use ${percent(share)} of the CPU: waiting for a quiet machine)`));
        const measurement = await run();
        const disturbed = measurement.foreignCpuShare > maxForeignCpuShare;
        if (!disturbed || attempt >= retries) {
          measurement.record();
          console.error(`  ${measurement.summary}${disturbed ? `  [noisy: others used ${percent(measurement.foreignCpuShare)}]` : ""}`);
          return;
        }
        console.error(`  ${what}: others used ${percent(measurement.foreignCpuShare)} of the CPU meanwhile; measuring again`);
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.failed.add(what);
      this.notes.push(`${what} failed: ${message}`);
      console.error(`  ${what} FAILED: ${message}`);
    }
  }
}

const percent = (share: number) => `${Math.round(share * 100)}%`;

function engineRuns(): { metric: string; run: EngineRun }[] {
  return [
    { metric: `pp${PROMPT}`, run: { mode: "pp", prompt: PROMPT } },
    { metric: `tg${GENERATE}`, run: { mode: "tg", tokens: GENERATE } },
    ...BATCHED.batchSizes.map((b) => ({
      metric: `batch${b}`,
      run: { mode: "batch", parallel: b, prompt: BATCHED.prompt, tokens: BATCHED.generate } as EngineRun,
    })),
  ];
}

async function measureTools(m: Measurer, model: string, path: string, threads: number): Promise<void> {
  await m.measure(`${model} llama-bench`, async () => {
    const r = await runLlamaBench(path, threads, PROMPT, GENERATE);
    return {
      foreignCpuShare: r.foreignCpuShare,
      record: () => {
        m.book.add(model, `pp${PROMPT}`, TOOL_SOURCE, { tokensPerSecond: r.pp, foreignCpuShare: r.foreignCpuShare });
        m.book.add(model, `tg${GENERATE}`, TOOL_SOURCE, { tokensPerSecond: r.tg, foreignCpuShare: r.foreignCpuShare });
      },
      summary: `llama-bench          pp${PROMPT} ${r.pp.toFixed(1)}  tg${GENERATE} ${r.tg.toFixed(1)} t/s`,
    };
  });
  await m.measure(`${model} llama-batched-bench`, async () => {
    const r = await runBatchedBench(path, threads, BATCHED);
    const speeds = [...r.decodeTokensPerSecond];
    return {
      foreignCpuShare: r.foreignCpuShare,
      record: () => {
        for (const [batch, speed] of speeds) m.book.add(model, `batch${batch}`, TOOL_SOURCE, { tokensPerSecond: speed, foreignCpuShare: r.foreignCpuShare });
      },
      summary: `llama-batched-bench  ${speeds.map(([b, s]) => `B=${b} ${s.toFixed(1)}`).join("  ")} t/s`,
    };
  });
}

async function measureEngine(m: Measurer, model: string, path: string, threads: number, libraries: LibrarySet): Promise<void> {
  for (const { metric, run } of engineRuns()) {
    await m.measure(`${model} llamux ${metric} on ${libraries.kind} libraries`, async () => {
      const r = await runEngine(path, threads, run, libraries.dir);
      return {
        foreignCpuShare: r.foreignCpuShare,
        record: () => m.book.add(model, metric, libraries.kind, r),
        summary: `llamux (${libraries.kind})`.padEnd(21) + `${metric} ${r.tokensPerSecond.toFixed(1)} t/s`,
      };
    });
  }
}

/** The exact command lines, for the report (engine lines carry their LLAMUX_LIB_DIR). */
function commandLines(models: Map<string, string>, threads: number, libraries: LibrarySet[]): string[] {
  const show = (argv: string[]) =>
    argv.map((a) => (a === process.execPath ? "bun" : a.startsWith("/") ? relative(process.cwd(), a) || "." : a)).join(" ");
  const lines: string[] = [];
  for (const path of models.values()) {
    lines.push(show(llamaBenchArgs(path, threads, PROMPT, GENERATE)));
    lines.push(show(batchedBenchArgs(path, threads, BATCHED)));
    for (const lib of libraries) {
      for (const { run } of engineRuns()) lines.push(`LLAMUX_LIB_DIR=${relative(process.cwd(), lib.dir)} ${show(engineBenchArgs(path, threads, run))}`);
    }
  }
  return lines;
}

/** The executable to time: --binary, else dist/llamux built (or rebuilt) by scripts/build-binary.ts (as it is with --no-build). */
function startupBinary(options: Options): string {
  if (options.binary) return options.binary;
  if (!options.build) {
    if (!existsSync(BINARY_PATH)) throw new Error(`${relative(process.cwd(), BINARY_PATH)} is missing (--no-build): \`make binary\` builds it`);
    return BINARY_PATH;
  }
  const build = Bun.spawnSync([process.execPath, `${REPO_ROOT}/scripts/build-binary.ts`], { stdio: ["ignore", "inherit", "inherit"] });
  if (build.exitCode !== 0) throw new Error(`make binary failed with exit code ${build.exitCode}`);
  return `${REPO_ROOT}/dist/llamux`;
}

/** Decode at 1 sequence with each sampler chain, interleaved; the ratios to top-k 40 go in a table of their own. */
const SAMPLING_CHAINS = ["top-k", "full", "top-p"] as const;

async function measureSampling(m: Measurer, model: string, path: string, threads: number, libraries: LibrarySet, round: number): Promise<void> {
  const chains = round % 2 === 1 ? [...SAMPLING_CHAINS] : [...SAMPLING_CHAINS].reverse();
  for (const sampling of chains) {
    await m.measure(`${model} llamux tg${GENERATE} ${sampling} sampling on ${libraries.kind} libraries`, async () => {
      const r = await runEngine(path, threads, { mode: "tg", tokens: GENERATE, sampling }, libraries.dir);
      return {
        foreignCpuShare: r.foreignCpuShare,
        record: () => m.book.add(model, `sampling ${sampling}`, libraries.kind, r),
        summary: `llamux (${libraries.kind})`.padEnd(21) + `tg${GENERATE} sampling ${sampling} ${r.tokensPerSecond.toFixed(1)} t/s`,
      };
    });
  }
}

function samplingTable(m: Measurer, models: string[], libraries: LibrarySet[]): string {
  const lines = [
    `Single-sequence decode (tg${GENERATE}) by sampler chain, medians; goal: vLLM's defaults ≥ 0.97 of top-k 40.`,
    "",
    "| model | libs | top-k 40 t/s | vLLM defaults (top_k off, top_p 1) t/s | ratio | top-p 0.95 + min-p 0.05 t/s | ratio | goal |",
    "|---|---|---:|---:|---:|---:|---:|---|",
  ];
  for (const model of models) {
    for (const lib of libraries) {
      const rate = (chain: string) => summarize(m.book.get(model, `sampling ${chain}`, lib.kind).map((x) => x.tokensPerSecond))?.median;
      const topK = rate("top-k");
      const full = rate("full");
      const topP = rate("top-p");
      const ratio = (x: number | undefined) => (x !== undefined && topK ? x / topK : undefined);
      const show = (x: number | undefined, digits = 1) => (x === undefined ? "–" : x.toFixed(digits));
      const fullRatio = ratio(full);
      lines.push(`| ${model} | ${lib.kind} | ${show(topK)} | ${show(full)} | ${show(fullRatio, 3)} | ${show(topP)} | ${show(ratio(topP), 3)} | ≥ 0.97 ${fullRatio === undefined ? "" : fullRatio >= 0.97 ? "PASS" : "FAIL"} |`);
    }
  }
  return lines.join("\n");
}

function vocabularySize(path: string): number {
  const tokens = readGgufHeaderSync(path, { maxArrayLength: 0 }).metadata.get("tokenizer.ggml.tokens") as GgufArray | undefined;
  return tokens?.length ?? 32_000;
}

// ---- speculative decoding (issue 20) ----
const SPEC_MODELS = [
  { key: "lfm2", name: "lfm2-350m-q4_0", draft: "lfm2-350m-draft-q4_0", tiny: "tiny-lfm2", tinyDraft: "tiny-lfm2-draft" },
  { key: "llama", name: "llama-1b-q4_0", draft: "llama-1b-draft-q4_0", tiny: "tiny-llama", tinyDraft: "tiny-llama-draft" },
] as const;
const SPEC_SETTINGS = { draftTokens: 4, contextPerSequence: 1024 };

/**
 * Every speculating case against its baseline on each llamux build and (when built) llama-server, in pairs
 * of loads. Returns the report section and the pairs by shape key.
 */
async function measureSpeculative(options: Options, builds: LlamuxBuild[]): Promise<{ section: string; byShape: Map<string, PairedSample[]>; commands: string[] }> {
  const log = (line: string) => console.error(line);
  const needsDraft = options.speculativeCases.includes("draft");
  const models: Array<SpeculativeBenchModel & { vocabularySize: number; key: string }> = [];
  for (const m of SPEC_MODELS.filter((m) => options.modelKeys.includes(m.key))) {
    const path = await ensureModel(options.speculativeTiny ? m.tiny : m.name, { log });
    // the draft model only for the case that drafts with it
    const draftPath = needsDraft ? await ensureModel(options.speculativeTiny ? m.tinyDraft : m.draft, { log }) : path;
    // the vocabulary alone (no weights), for the copy case's logit bias
    const { LlamaModel } = await import("../ffi/llama.ts");
    const vocabOnly = LlamaModel.load(path, { vocabOnly: true });
    const vocabularySize = vocabOnly.vocab.size;
    vocabOnly.dispose();
    models.push({ name: options.speculativeTiny ? m.tiny : m.name, path, draftPath, vocabularySize, key: m.key });
  }
  // each llamux build, then llama-server (its llamux command is unused)
  const servers = [
    ...builds.map((build) => ({ server: "llamux" as const, llamux: build })),
    ...(llamaServerAvailable() && !options.speculativeLlamuxOnly ? [{ server: "llama-server" as const, llamux: { id: "llama-server", command: [], env: {} } }] : []),
  ];
  const settings = { ...SPEC_SETTINGS, tokens: options.speculativeTokens, streams: options.speculativeStreams, threads: options.threads };
  // each speculating case beside its baseline, both servers up, loads alternating (see measurePair)
  const byShape = new Map<string, PairedSample[]>();
  for (const model of models) {
    const samples: PairedSample[] = [];
    for (const name of options.speculativeCases.filter((c) => !isBaseline(c))) {
      for (const { server, llamux } of servers) {
        await waitForQuietCpu(options.maxForeignCpuShare, options.settleTimeoutMs, () => {});
        try {
          samples.push(...await measurePair(server, model, name, settings, model.vocabularySize, options.speculativePairs, llamux, log));
        } catch (error) {
          console.error(`  ${model.name} ${llamux.id} ${name} FAILED: ${(error as Error).message}`);
        }
      }
    }
    byShape.set(model.key, samples);
  }
  const commands = models.flatMap((model) => options.speculativeCases.flatMap((name) => servers.map(({ server, llamux }) =>
    `${Object.entries(llamux.env).map(([k, v]) => `${k}=${relative(process.cwd(), v)} `).join("")}${serverArgs(server, model, name, settings, 0, Math.max(...settings.streams), llamux).map((a) => (a === process.execPath ? "bun" : a.startsWith("/") ? relative(process.cwd(), a) : /[{" ]/.test(a) ? `'${a}'` : a)).join(" ")}`)));
  const section = [
    `## Speculative decoding (${settings.tokens} greedy tokens per stream, draft length ${settings.draftTokens}, ${options.threads} threads, ${options.speculativePairs} pairs of loads)`,
    "",
    "Each case ran beside its baseline (both servers up, loads alternating: plain then speculating, then the other way round);",
    "the ratio is the median of the pairs' own ratios, so that the machine's drift between minutes cancels out.",
    `llamux builds: ${builds.map((b) => `${buildName(b)}, the ${b.what}`).join("; ")}.`,
    "",
    pairedTable([...byShape.values()].flat()),
    "",
    servers.some((s) => s.server === "llama-server") ? "" : options.speculativeLlamuxOnly ? "llamux only (--spec-llamux-only, or --quick)." : "llama-server not built (.native/tools/llama-server): llamux only.",
    "Random weights: a draft model agrees with the target by chance only, so \"draft\" shows the cost of drafting",
    "at near-zero acceptance (the back-off should keep it near plain); \"self-draft\" (every draft accepted, but the",
    "draft costs as much as the target) and \"ngram-copy\" (output forced to copy the prompt) are the high-acceptance cases;",
    "\"ngram-mixed\" (every word of the copy in either of two spellings) and \"ngram-near-copy\" (one word in four) lie between.",
    "",
    "Server commands (port 0 stands for a free port):",
    ...commands.map((c) => `    ${c}`),
  ].join("\n");
  return { section, byShape, commands };
}

async function main(): Promise<void> {
  const options = parseOptions();
  const parts = new Set(options.parts);
  if (parts.size === 1 && parts.has("startup")) {
    console.log(startupSummary(await measureStartup(startupBinary(options), options.runs)));
    return;
  }
  const started = performance.now();
  const date = new Date().toISOString();
  const machine = machineInfo();
  const m = new Measurer(options);

  // llama-bench and llama-batched-bench: the engine part, and the server part's engine limit
  if (parts.has("engine") || parts.has("server")) {
    if (options.build) await ensureTools();
    else if (!toolsBuilt()) m.notes.push("llama.cpp's tools are not all built (--no-build): `make llama-tools` builds llama-bench, llama-batched-bench and llama-server");
  }
  if (parts.has("server") && !existsSync(LLAMA_SERVER)) {
    throw new Error(`${LLAMA_SERVER} is missing: run \`make llama-tools\` (it builds llama-server beside llama-bench)`);
  }
  const { models, shapeOf } = await resolveModels(options);
  const available = findLibrarySets();
  const { selected: libraries, missing: missingLibraries } = selectLibrarySets(options.libraryKinds ?? [...new Set(available.map((s) => s.kind))], available);

  const engineMissing = !engineBenchAvailable();
  if (engineMissing) m.notes.push("scripts/bench-engine.ts is missing: llamux was not measured");
  for (const kind of missingLibraries) m.notes.push(`no ${kind} library build found in .native/lib*: llamux not measured on it`);
  const engineLibraries = engineMissing ? [] : libraries;
  // the engine parts and the checkout run llamux on these
  for (const lib of libraries) await refreshShim(lib);

  // what runs as llamux in the server parts, named under every row
  const serverParts = SERVER_PARTS.filter((part) => parts.has(part));
  const { builds, missing: missingLlamux } = serverParts.length > 0
    ? findLlamuxBuilds(options.llamuxKinds, { libraries, build: options.build, ...(options.serverBinary ? { given: options.serverBinary } : {}), log: (line) => console.error(line) })
    : { builds: [], missing: [] };
  for (const line of missingLlamux) {
    m.notes.push(line);
    console.error(`note: ${line}`);
  }
  if (serverParts.length > 0 && builds.length === 0) m.notes.push(`no llamux build to run: the parts ${serverParts.join(", ")} were not measured`);
  const firstBuild = builds[0];
  for (const build of builds) console.error(`llamux ${buildName(build)}: the ${build.what}`);

  const sections: string[] = [];
  const goals: GoalRow[] = [];
  if (parts.has("engine") || parts.has("sampling")) {
    for (let round = 1; round <= options.runs; round++) {
      for (const [model, path] of models) {
        console.error(`[run ${round}/${options.runs}] ${model}`);
        // Alternate who goes first so that a slow phase of a shared machine does not always hit the same side.
        const steps = [
          ...(parts.has("engine") ? [() => measureTools(m, model, path, options.threads)] : []),
          ...(parts.has("engine") ? engineLibraries.map((lib) => () => measureEngine(m, model, path, options.threads, lib)) : []),
          ...(parts.has("sampling") ? engineLibraries.map((lib) => () => measureSampling(m, model, path, options.threads, lib, round)) : []),
        ];
        if (round % 2 === 0) steps.reverse();
        for (const step of steps) await step();
      }
    }
    if (parts.has("sampling")) sections.push(`## Sampling\n\n${samplingTable(m, [...models.keys()], engineLibraries)}`);
  }

  // The SDK's batch API against one call at a time (issue 7): reported as notes, once per model.
  if (!engineMissing && parts.has("engine")) {
    for (const [model, path] of models) {
      await m.measure(`${model} SDK llm.chat batch`, async () => {
        const r = await runSdkBatch(path, options.threads);
        return { foreignCpuShare: r.foreignCpuShare, record: () => m.notes.push(sdkBatchNote(model, r)), summary: sdkBatchNote(model, r) };
      });
    }
  }

  const serverCommands: string[] = [];
  const serverSamples = new Map<string, ScenarioSamples>();
  if (parts.has("server") && builds.length > 0) {
    const serverSections: string[] = [];
    // Every llamux build in the same runs as one llama-server: the release executable (portable libraries)
    // is what people download, `make binary`'s (prebuilt libraries) what `make` builds.
    for (const [model, path] of models) {
      const result = await runServerScenario(model, path, vocabularySize(path), {
        runs: options.runs, threads: options.threads, parallel: BATCHED.batchSizes.at(-1)!, promptTokens: BATCHED.prompt,
        outputTokens: options.serverOutputTokens, requestsPerClient: options.serverRequests, builds,
        sizes: options.quick ? QUICK_SIZES : FULL_SIZES, log: (line) => console.error(line),
      });
      serverSections.push(result.markdown);
      serverCommands.push(...result.commands);
      serverSamples.set(model, result.samples);
      m.serverJson[model] = result.json;
    }
    sections.push(`## Whole server\n\n${serverSections.join("\n\n")}`);
  }

  let speculation: Map<string, PairedSample[]> | undefined;
  if (parts.has("speculative") && builds.length > 0) {
    try {
      const result = await measureSpeculative(options, builds);
      sections.push(result.section);
      speculation = result.byShape;
    } catch (error) {
      m.notes.push(`speculative decoding not measured: ${(error as Error).message}`);
    }
  }
  // issue 41's table, for each shape and build, from the server and speculative parts
  if ((parts.has("server") || parts.has("speculative")) && builds.length > 0) {
    for (const model of models.keys()) {
      for (const build of builds) {
        goals.push(...issue41Rows(model, { id: build.id, name: buildName(build) }, serverSamples.get(model), speculation?.get(shapeOf.get(model)!), BATCHED.batchSizes.at(-1)!));
      }
    }
  }

  if (parts.has("busy") && firstBuild) {
    const busySections: string[] = [];
    for (const [model, path] of models) {
      const result = await runBusyMachine(path, { runs: options.runs, tokens: BATCHED.generate, llamux: firstBuild, log: (line) => console.error(`${model}: ${line}`) });
      busySections.push(`${model}, llamux ${buildName(firstBuild)}\n\n${result.markdown}`);
      m.serverJson[`${model} busy machine`] = result.json;
    }
    sections.push(`## A busy machine\n\n${busySections.join("\n\n")}`);
  }

  const [sessions, parallel, prefixTokens, turnTokens, turns] = options.agentShape as [number, number, number, number, number];
  const agentShape = { sessions, parallel, prefixTokens, turnTokens, turns, outputTokens: 16, cacheRamMiB: options.cacheRamMiB, thinkMs: options.agentThinkMs };
  if (parts.has("agents") && firstBuild) {
    const agentSections: string[] = [];
    for (const [model, path] of await agentModels(options, models)) {
      const build = buildName(firstBuild);
      const log = (line: string) => console.error(`${model}: ${line}`);
      const result = await runAgentSessions(path, { ...agentShape, threads: options.threads, llamux: firstBuild, modelName: model, build, restart: true, log });
      agentSections.push(`${model}\n\n${result.markdown}`);
      goals.push(...result.goals);
      m.serverJson[`${model} agent sessions`] = result.json;
      try {
        const replay = await runClaudeCodeReplay({ model: path, modelName: model, build, llamux: firstBuild, threads: options.threads, outputTokens: agentShape.outputTokens, log });
        agentSections.push(`${model}\n\n${replay.markdown}`);
        goals.push(...replay.goals);
        m.serverJson[`${model} Claude Code replay`] = replay.json;
      } catch (error) {
        m.notes.push(`${model}: Claude Code's replay not measured: ${(error as Error).message}`);
      }
    }
    sections.push(`## Agent sessions\n\n${agentSections.join("\n\n")}`);
  }

  if (parts.has("prefill") && firstBuild) {
    // The generated tiny-llama-agent (64k trained context): its 30k-token prefill takes tens of seconds on
    // two cores, where the LFM2-350M shape's takes a quarter of an hour (attention at 30k depth).
    const path = await ensureModel("tiny-llama-agent", { log: (line) => console.error(line) });
    const result = await runLongPrefill(path, {
      longTokens: 30_000, shortTokens: 20, delayMs: 1000, outputTokens: 4, contextPerSequence: 32_768, threads: options.threads,
      runs: options.runs, llamux: firstBuild, log: (line) => console.error(`prefill: ${line}`),
    });
    sections.push(`## A short request during a long prefill\n\ntiny-llama-agent, llamux ${buildName(firstBuild)}\n\n${result.markdown}`);
    m.serverJson["long prefill"] = result.json;
  }

  if (parts.has("affinity") && firstBuild) {
    const affinitySections: string[] = [];
    for (const [model, path] of await agentModels(options, models)) {
      const result = await runSessionAffinity(path, {
        ...agentShape, threads: options.threads, llamux: firstBuild, modelName: model, build: buildName(firstBuild), log: (line) => console.error(`${model}: ${line}`),
      });
      affinitySections.push(`${model}\n\n${result.markdown}`);
      goals.push(...result.goals);
      m.serverJson[`${model} session affinity`] = result.json;
    }
    sections.push(`## Sessions over replicas behind HAProxy\n\n${affinitySections.join("\n\n")}`);
  }

  if (parts.has("startup")) {
    try {
      m.notes.push(startupSummary(await measureStartup(startupBinary(options), options.runs)));
    } catch (error) {
      m.notes.push(`start-up not measured: ${(error as Error).message}`);
    }
  }

  const report: BenchReport = {
    date,
    runs: options.runs,
    threads: options.threads,
    maxForeignCpuShare: options.maxForeignCpuShare,
    machine,
    builds: {
      tools: `${await toolsBuildInfo()}${toolsBuilt() ? "" : " (not every tool is built: make llama-tools)"}`, libraries: engineLibraries, missingLibraries,
      llamux: builds.map((b) => ({ name: buildName(b), what: b.what })), missingLlamux,
    },
    models: Object.fromEntries([...models].map(([name, path]) => [name, relative(process.cwd(), path)])),
    commands: [...(parts.has("engine") ? commandLines(models, options.threads, engineLibraries) : []), ...new Set(serverCommands)],
    rows: parts.has("engine") ? buildRows([...models.keys()], METRICS, engineLibraries, m.book, options.maxForeignCpuShare) : [],
    goals,
    sections,
    server: m.serverJson,
    notes: m.notes,
    durationSeconds: (performance.now() - started) / 1000,
  };
  const written = writeReport(report, options.outputDir);
  if (goals.length > 0) console.log(`## Goals\n\n${goalTable(goals)}\n`);
  if (report.rows.length > 0) console.log(markdownTable(report.rows));
  for (const section of sections) console.log(`\n${section}`);
  for (const note of report.notes) console.log(`note: ${note}`);
  console.log(`\nwritten: ${relative(process.cwd(), written.markdown)}, ${relative(process.cwd(), written.json)} (${Math.round(report.durationSeconds)} s)`);
  if (options.strict && (report.rows.some((r) => r.result !== "PASS") || goals.some((g) => goalResult(g) !== "PASS"))) process.exit(1);
}

await main();
