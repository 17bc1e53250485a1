// `make bench` part "agents" (issues 34 and 42): agent sessions sharing a long prefix, more sessions than
// sequences (the workload: agent-workload.ts). All sessions run at once over `parallel` sequences, so a
// session's next turn often finds its sequence given to another session: what it does not have to process
// again comes from the prompt cache (llamux: sequence copies, host memory and its disk tier; llama-server:
// its --cache-ram). Reports, per turn, the median and worst time to first token against a cold prefill of a
// prompt of the same length (random tokens the server has never seen, on an idle server), and issue 42's
// goals: later turns' TTFT p50 ≤ 10% and p90 ≤ 25% of a cold turn, no worse than llama-server --cache-ram.
// Then (with `restart`) llamux restarts on its disk tier and each session sends its next turn
// (agent-restart.ts): goal ≤ 15% of a cold turn.
//
// By default every session sends its next turn as soon as its last one is answered, all at once: the
// worst case, where a turn also waits for the other sessions' new tokens (a queue no cache removes).
// With --think-ms an agent spends that long between an answer and its next turn (running its tools),
// and session i starts i × think / sessions ms after the first, as agents that were not started together:
// then a turn mostly finds the server free, and its time is what the prompt cache leaves to process.
// Run alone: bun scripts/bench/agent-sessions.ts [--model PATH] [--sessions N] [--parallel N] [--prefix N]
//   [--turn-tokens N] [--turns N] [--output N] [--cache-ram MIB] [--threads N|default] [--lib-dir DIR] [--think-ms N] [--no-restart]
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ensureModel } from "../gen-models.ts";
import { wholeNumberOption } from "../../src/usage-error.ts";
import { LLAMA_SERVER, defaultLlamuxCommand, percentile, type LlamuxCommand, type RunningServer, type ServerKind, type ServerSpec, startServer } from "./server.ts";
import { type SessionShape, SessionWorkload, type TurnSample, laterTurnFigures, runSessions, timeToFirstToken, vocabularySize } from "./agent-workload.ts";
import { type RestartResult, measureAfterRestart } from "./agent-restart.ts";
import { readMetric } from "./metrics.ts";
import type { GoalRow } from "./report.ts";

export interface AgentSessionsShape extends SessionShape {
  parallel: number;
  /** --cache-ram for both servers, in MiB. */
  cacheRamMiB: number;
  /** "default": each server picks its own (llamux measures how many cores are free). */
  threads: number | "default";
}

export interface AgentSessionsOptions extends AgentSessionsShape {
  llamux: LlamuxCommand;
  /** The model and llamux build the goal rows name. */
  modelName: string;
  build: string;
  /** After llamux's sessions, restart it on its disk tier and send each session's next turn. */
  restart: boolean;
  log?: (line: string) => void;
}

interface ServerResult {
  kind: ServerKind;
  turns: TurnSample[];
  /** Cold prefill TTFT for each turn's prompt length (index = turn). */
  coldMs: number[];
  /** llamux: the host prompt cache's bytes after the run (from /metrics). */
  cacheBytes?: number;
  /** One more turn of session 0 on the idle server (no other session queued before it), and a cold prefill of its length. */
  alone: { promptTokens: number; cachedTokens: number; ttftMs: number; coldMs: number };
  /** llamux with `restart`: each session's next turn after a restart on its disk tier. */
  restart?: RestartResult;
}

async function runOne(kind: ServerKind, model: string, options: AgentSessionsOptions): Promise<ServerResult> {
  const log = options.log ?? (() => {});
  const workload = new SessionWorkload(options, vocabularySize(model));
  // the sessions' turns, session 0's alone turn, and with the restart one more turn each
  const longest = options.prefixTokens + (options.turns + 2) * options.turnTokens;
  const diskDir = kind === "llamux" && options.restart ? mkdtempSync(join(tmpdir(), "llamux-bench-restart-")) : undefined;
  const spec: ServerSpec = {
    model, threads: options.threads, parallel: options.parallel, llamux: options.llamux, contextPerSequence: longest + options.outputTokens + 64,
    extraArgs: ["--cache-ram", String(options.cacheRamMiB)], ...(diskDir ? { cacheDiskDir: diskDir } : {}),
  };
  let server: RunningServer = await startServer(kind, spec);
  try {
    const { turns } = await runSessions(server.baseUrl, model, workload, options, { label: kind, log });
    // the cache without queueing: session 0's next turn while nothing else runs
    const { prompt: alonePrompt } = workload.next(0);
    const aloneTurn = await timeToFirstToken(server.baseUrl, model, alonePrompt, options.outputTokens);
    const aloneCold = await timeToFirstToken(server.baseUrl, model, workload.cold(alonePrompt.length, 78_000), options.outputTokens);
    const alone = { promptTokens: alonePrompt.length, cachedTokens: aloneTurn.cachedTokens, ttftMs: aloneTurn.ttftMs, coldMs: aloneCold.ttftMs };
    log(`${kind}: session 0 alone (${alone.promptTokens} tokens, ${alone.cachedTokens} cached): ${alone.ttftMs.toFixed(0)} ms, cold ${alone.coldMs.toFixed(0)} ms`);
    // cold prefills of each turn's length: tokens no earlier prompt started with, one at a time
    const coldMs: number[] = [0];
    for (let turn = 1; turn <= options.turns; turn++) {
      const length = options.prefixTokens + turn * options.turnTokens;
      coldMs[turn] = (await timeToFirstToken(server.baseUrl, model, workload.cold(length, 77_000 + turn), options.outputTokens)).ttftMs;
      log(`${kind}: cold prefill of ${length} tokens: first token after ${coldMs[turn]!.toFixed(0)} ms`);
    }
    const cacheBytes = kind === "llamux" ? await readMetric(server.baseUrl, "llamux:prompt_cache_bytes") : undefined;
    let restart: RestartResult | undefined;
    if (diskDir) {
      const after = await measureAfterRestart(server, spec, model, workload, { sessions: options.sessions, outputTokens: options.outputTokens, log });
      server = after.server;
      restart = after.result;
    }
    return { kind, turns, coldMs, alone, ...(cacheBytes !== undefined ? { cacheBytes } : {}), ...(restart ? { restart } : {}) };
  } finally {
    await server.stop();
    if (diskDir) rmSync(diskDir, { recursive: true, force: true });
  }
}

const ms = (value: number) => `${value.toFixed(0)} ms`;

/** Runs the scenario on llamux and, when built, llama-server; returns the report section, its data and issue 42's goal rows. */
export async function runAgentSessions(model: string, options: AgentSessionsOptions): Promise<{ markdown: string; json: unknown; goals: GoalRow[] }> {
  const kinds: ServerKind[] = existsSync(LLAMA_SERVER) ? ["llamux", "llama-server"] : ["llamux"];
  const results: ServerResult[] = [];
  for (const kind of kinds) results.push(await runOne(kind, model, options));
  const llamux = results[0]!;
  const server = results.find((r) => r.kind === "llama-server");
  const rows: string[] = [];
  for (let turn = 1; turn <= options.turns; turn++) {
    const cells: string[] = [];
    for (const result of results) {
      const samples = result.turns.filter((t) => t.turn === turn);
      const ttfts = samples.map((t) => t.ttftMs);
      const cachedShare = samples.reduce((sum, t) => sum + t.cachedTokens, 0) / samples.reduce((sum, t) => sum + t.promptTokens, 0);
      const cold = result.coldMs[turn]!;
      const p50 = percentile(ttfts, 50);
      const worst = ttfts.reduce((a, b) => Math.max(a, b), 0);
      cells.push(`${(cachedShare * 100).toFixed(0)}% | ${p50.toFixed(0)} | ${worst.toFixed(0)} | ${cold.toFixed(0)} | ${(worst / cold).toFixed(3)}`);
    }
    const versus = server ? ` | ${(percentile(llamux.turns.filter((t) => t.turn === turn).map((t) => t.ttftMs), 50) / percentile(server.turns.filter((t) => t.turn === turn).map((t) => t.ttftMs), 50)).toFixed(2)}` : "";
    rows.push(`| ${turn} | ${options.prefixTokens + turn * options.turnTokens} | ${cells.join(" | ")}${versus} |`);
  }
  const header = results.map((r) => `${r.kind} cached | p50 ms | worst ms | cold ms | worst ÷ cold`).join(" | ");
  const memory = llamux.cacheBytes !== undefined
    ? `llamux's prompt cache held ${(llamux.cacheBytes / 1048576).toFixed(1)} MiB at the end (bound ${options.cacheRamMiB} MiB).`
    : "";
  const aloneLines = results.map((r) => `- ${r.kind}: ${r.alone.ttftMs.toFixed(0)} ms (${r.alone.cachedTokens} of ${r.alone.promptTokens} tokens cached) against a cold prefill of ${r.alone.coldMs.toFixed(0)} ms: ${(r.alone.ttftMs / r.alone.coldMs).toFixed(3)}`);
  const goals = goalRows(options, llamux, server);
  const restart = llamux.restart;
  const markdown = [
    `### Agent sessions: ${options.sessions} sessions over ${options.parallel} sequences, ${options.prefixTokens}-token shared prefix, +${options.turnTokens} tokens a turn, ${options.turns} turns, ${options.outputTokens} tokens out, --cache-ram ${options.cacheRamMiB}, ${options.threads === "default" ? "each server's default" : options.threads} threads, ${options.thinkMs ? `${options.thinkMs} ms between an answer and the next turn, sessions started ${(options.thinkMs / options.sessions).toFixed(0)} ms apart` : "every turn sent at once"}; llamux ${options.build}`,
    "",
    `| turn | prompt tokens | ${header}${server ? " | llamux p50 ÷ llama-server p50" : ""} |`,
    `|---|---|${results.map(() => "---|---|---|---|---|").join("")}${server ? "---|" : ""}`,
    ...rows,
    "",
    memory,
    "",
    `Session 0's turn ${options.turns + 1} alone on the idle server afterwards (the cache without queueing behind other sessions):`,
    "",
    ...aloneLines,
    ...(restart ? [
      "",
      `After a restart: llamux's disk tier (--cache-disk) held ${(restart.diskBytes / 1048576).toFixed(1)} MiB ${(restart.waitedMs / 1000).toFixed(1)} s after the last request; the server stopped (SIGTERM) and started again on it in ${(restart.restartMs / 1000).toFixed(1)} s; then each session's next turn, one at a time (${restart.diskHits} prompt(s) took their prefix from the disk tier):`,
      "",
      "| session | prompt tokens | cached | TTFT ms | cold ms | ÷ cold |",
      "|---|---:|---:|---:|---:|---:|",
      ...restart.turns.map((t) => `| ${t.session} | ${t.promptTokens} | ${t.cachedTokens} | ${t.ttftMs.toFixed(0)} | ${t.coldMs.toFixed(0)} | ${(t.ttftMs / t.coldMs).toFixed(3)} |`),
    ] : []),
    "",
    "Issue 42's goals on this shape (each server's turns against its own cold prefill of the same length):",
    "",
    ...goals.map((g) => `- ${g.measure}: ${g.ratio === undefined || !Number.isFinite(g.ratio) ? "–" : g.ratio.toFixed(3)} (goal ${"atMost" in g.goal ? `≤ ${g.goal.atMost}` : `≥ ${g.goal.atLeast}`})${g.note ? `; ${g.note}` : ""}`),
    ...(server ? [] : ["", "llama-server not built (make llama-tools): llamux only."]),
  ].join("\n");
  return { markdown, json: { shape: { ...options, llamux: undefined, log: undefined }, results }, goals };
}

function goalRows(options: AgentSessionsOptions, llamux: ServerResult, server: ServerResult | undefined): GoalRow[] {
  const shape = `${options.sessions} sessions × ${options.turns} turns over ${options.parallel} sequences`;
  const coldOf = (result: ServerResult) => (t: TurnSample) => result.coldMs[t.turn];
  const mine = laterTurnFigures(llamux.turns, coldOf(llamux));
  const theirs = server ? laterTurnFigures(server.turns, coldOf(server)) : undefined;
  const colds = llamux.coldMs.slice(2);
  const coldRange = colds.length > 0 ? `${Math.min(...colds).toFixed(0)}–${Math.max(...colds).toFixed(0)} ms` : "–";
  const base = { issue: 42, model: options.modelName, build: options.build };
  const rows: GoalRow[] = [
    { ...base, measure: `${shape}: later turns' TTFT p50 ÷ a cold turn`, llamux: ms(mine.p50Ms), beside: coldRange, besideWhat: "cold turns", ratio: mine.p50OfCold, goal: { atMost: 0.1 }, ...(theirs ? { note: `llama-server: ${theirs.p50OfCold.toFixed(3)}` } : {}) },
    { ...base, measure: `${shape}: later turns' TTFT p90 ÷ a cold turn`, llamux: ms(mine.p90Ms), beside: coldRange, besideWhat: "cold turns", ratio: mine.p90OfCold, goal: { atMost: 0.25 }, ...(theirs ? { note: `llama-server: ${theirs.p90OfCold.toFixed(3)}` } : {}) },
  ];
  for (const [which, pick] of [["p50", (f: typeof mine) => f.p50Ms], ["p90", (f: typeof mine) => f.p90Ms]] as const) {
    rows.push({
      ...base, measure: `${shape}: later turns' TTFT ${which}, beside llama-server --cache-ram ${options.cacheRamMiB}`, llamux: ms(pick(mine)),
      beside: theirs ? ms(pick(theirs)) : undefined, besideWhat: "llama-server", ratio: theirs ? pick(mine) / pick(theirs) : undefined, goal: { atMost: 1 },
      ...(theirs ? {} : { note: "llama-server not built: make llama-tools" }),
    });
  }
  if (options.restart) {
    const turns = llamux.restart?.turns ?? [];
    const ofCold = turns.map((t) => t.ttftMs / t.coldMs);
    rows.push({
      ...base, measure: `after a restart on the disk tier: a session's next turn's TTFT ÷ a cold turn (p50 of ${turns.length} sessions)`,
      llamux: turns.length ? ms(percentile(turns.map((t) => t.ttftMs), 50)) : undefined, beside: turns.length ? ms(percentile(turns.map((t) => t.coldMs), 50)) : undefined,
      besideWhat: "cold turns", ratio: turns.length ? percentile(ofCold, 50) : undefined, goal: { atMost: 0.15 },
      note: turns.length ? `worst ${Math.max(...ofCold).toFixed(3)}` : "not measured",
    });
  }
  return rows;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      model: { type: "string" }, sessions: { type: "string" }, parallel: { type: "string" }, prefix: { type: "string" }, "turn-tokens": { type: "string" },
      turns: { type: "string" }, output: { type: "string" }, "cache-ram": { type: "string" }, threads: { type: "string" }, "lib-dir": { type: "string" }, "think-ms": { type: "string" },
      "no-restart": { type: "boolean" }, llamux: { type: "string" }, help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(`Usage: bun scripts/bench/agent-sessions.ts [options]     (make bench, part agents)
  --model PATH       the model (default: the generated lfm2-350m-q4_0)
  --sessions N       sessions at once (default 8)
  --parallel N       sequences of each server (default 4)
  --prefix N         tokens of the prefix every session shares (default 12000)
  --turn-tokens N    tokens each turn adds to a session's history (default 1500)
  --turns N          turns per session (default 4)
  --output N         tokens generated per turn (default 16)
  --cache-ram MIB    each server's host-memory prompt cache (default 8192)
  --threads N        threads of each server, or "default" (default)
  --llamux PATH      a llamux executable (dist/llamux-<version>-linux-x64) instead of bun src/main.ts
  --lib-dir DIR      llama.cpp libraries llamux runs on (LLAMUX_LIB_DIR; default its own); llama-server
                     is .native/tools/llama-server, or LLAMUX_TOOLS_DIR's
  --think-ms N       an agent's time between an answer and its next turn, sessions started N / sessions ms
                     apart (default 0: every turn at once, all sessions together)
  --no-restart       leave out llamux's restart on its disk tier after the sessions`);
    process.exit(0);
  }
  // every number a whole count (0 allowed only where it means none), so that a typo is an error, not a NaN run
  const count = (name: "sessions" | "parallel" | "prefix" | "turn-tokens" | "turns" | "output" | "cache-ram" | "think-ms" | "threads", fallback: number, least = 1): number =>
    wholeNumberOption(values[name], name, least) ?? fallback;
  let shape: AgentSessionsShape;
  try {
    shape = {
      sessions: count("sessions", 8), parallel: count("parallel", 4), prefixTokens: count("prefix", 12_000),
      turnTokens: count("turn-tokens", 1500), turns: count("turns", 4), outputTokens: count("output", 16),
      cacheRamMiB: count("cache-ram", 8192, 0), thinkMs: count("think-ms", 0, 0),
      threads: values.threads === undefined || values.threads === "default" ? "default" as const : count("threads", 2),
    };
  } catch (error) {
    console.error((error as Error).message);
    process.exit(2);
  }
  const model = values.model ?? await ensureModel("lfm2-350m-q4_0");
  const result = await runAgentSessions(model, {
    ...shape, llamux: defaultLlamuxCommand(values.llamux, values["lib-dir"]), modelName: model,
    build: values.llamux ?? (values["lib-dir"] ? `checkout (${values["lib-dir"]})` : "checkout"),
    restart: !values["no-restart"], log: (line) => console.error(line),
  });
  console.log(result.markdown);
}
