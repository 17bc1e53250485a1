// `make bench` part "agents" (issue 34): agent sessions sharing a long prefix, more sessions than
// sequences. Each session sends its turns one after another; every turn's prompt is the shared prefix,
// then the session's own history, which grows by `turnTokens` a turn (as an agent resends system prompt,
// tools and history). All sessions run at once over `parallel` sequences, so a session's next turn often
// finds its sequence given to another session: what it does not have to process again comes from the
// prompt cache (llamux: sequence copies and host memory; llama-server: its --cache-ram). Reports, per
// turn, the median and worst time to first token against a cold prefill of a prompt of the same length
// (random tokens the server has never seen, on an idle server), and llamux's p50 against llama-server's.
//
// By default every session sends its next turn as soon as its last one is answered, all at once: the
// worst case, where a turn also waits for the other sessions' new tokens (a queue no cache removes).
// With --think-ms an agent spends that long between an answer and its next turn (running its tools),
// and session i starts i × think / sessions ms after the first, as agents that were not started together:
// then a turn mostly finds the server free, and its time is what the prompt cache leaves to process.
// Run alone: bun scripts/bench/agent-sessions.ts [--model PATH] [--sessions N] [--parallel N] [--prefix N]
//   [--turn-tokens N] [--turns N] [--output N] [--cache-ram MIB] [--threads N|default] [--lib-dir DIR] [--think-ms N]
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { ensureModel } from "../gen-models.ts";
import { readGgufHeaderSync, type GgufArray } from "../../src/store/gguf.ts";
import { wholeNumberOption } from "../../src/usage-error.ts";
import { LLAMA_SERVER, defaultLlamuxCommand, percentile, randomPrompt, startServer, streamRequest, type RunningServer, type ServerKind, type ServerSpec } from "./server.ts";

export interface AgentSessionsShape {
  sessions: number;
  parallel: number;
  /** Tokens of the prefix every session's prompts start with. */
  prefixTokens: number;
  /** Tokens each turn adds to a session's history. */
  turnTokens: number;
  turns: number;
  /** Tokens generated per turn. */
  outputTokens: number;
  /** --cache-ram for both servers, in MiB. */
  cacheRamMiB: number;
  /** "default": each server picks its own (llamux measures how many cores are free). */
  threads: number | "default";
  /** An agent's time between an answer and its next turn; 0: at once, all sessions started together. */
  thinkMs?: number;
}

export interface AgentSessionsOptions extends AgentSessionsShape {
  llamux: string[];
  /** The library build llamux runs on (LLAMUX_LIB_DIR); left out, its default. */
  llamuxLibDir?: string;
  log?: (line: string) => void;
}

interface TurnSample { session: number; turn: number; promptTokens: number; ttftMs: number; cachedTokens: number }
interface ServerResult {
  kind: ServerKind;
  turns: TurnSample[];
  /** Cold prefill TTFT for each turn's prompt length (index = turn). */
  coldMs: number[];
  /** llamux: the host prompt cache's bytes after the run (from /metrics). */
  cacheBytes?: number;
  /** One more turn of session 0 on the idle server (no other session queued before it), and a cold prefill of its length. */
  alone: { promptTokens: number; cachedTokens: number; ttftMs: number; coldMs: number };
}

function vocabularySize(path: string): number {
  const header = readGgufHeaderSync(path, { maxArrayLength: 0 });
  return (header.metadata.get("tokenizer.ggml.tokens") as GgufArray | undefined)?.length ?? 32_000;
}

/** Time to the first token, and the prompt tokens the server says it took from its cache (0 when it does not say). */
async function timeToFirstToken(server: RunningServer, model: string, prompt: number[], outputTokens: number): Promise<{ ttftMs: number; cachedTokens: number }> {
  // special tokens as text: a random model may pick one, and llamux (as vLLM) sends no chunk for an empty piece
  const timing = await streamRequest(server.baseUrl, "/v1/completions", { model, prompt, max_tokens: outputTokens, temperature: 0, ignore_eos: true, skip_special_tokens: false });
  return { ttftMs: (timing.chunkTimes[0] ?? timing.endAt) - timing.sentAt, cachedTokens: timing.cachedTokens ?? 0 };
}

async function runOne(kind: ServerKind, model: string, options: AgentSessionsOptions): Promise<ServerResult> {
  const log = options.log ?? (() => {});
  const vocabulary = vocabularySize(model);
  const longest = options.prefixTokens + (options.turns + 1) * options.turnTokens;
  const spec: ServerSpec = {
    model, threads: options.threads, parallel: options.parallel, llamux: options.llamux, contextPerSequence: longest + options.outputTokens + 64,
    ...(options.llamuxLibDir ? { llamuxLibDir: options.llamuxLibDir } : {}),
  };
  const server = await startServer(kind, { ...spec, extraArgs: ["--cache-ram", String(options.cacheRamMiB)] });
  try {
    const prefix = randomPrompt(options.prefixTokens, vocabulary, 1);
    const histories = Array.from({ length: options.sessions }, () => [] as number[]);
    const turns: TurnSample[] = [];
    const thinkMs = options.thinkMs ?? 0;
    await Promise.all(histories.map(async (history, session) => {
      await Bun.sleep((session * thinkMs) / options.sessions);
      for (let turn = 1; turn <= options.turns; turn++) {
        if (turn > 1) await Bun.sleep(thinkMs);
        const added = randomPrompt(options.turnTokens, vocabulary, 1000 + session * 100 + turn);
        for (const token of added) history.push(token);
        const prompt = prefix.concat(history);
        const { ttftMs, cachedTokens } = await timeToFirstToken(server, model, prompt, options.outputTokens);
        turns.push({ session, turn, promptTokens: prompt.length, ttftMs, cachedTokens });
        log(`${kind}: session ${session} turn ${turn} (${prompt.length} tokens, ${cachedTokens} cached): first token after ${ttftMs.toFixed(0)} ms`);
      }
    }));
    // the cache without queueing: session 0's next turn while nothing else runs
    for (const token of randomPrompt(options.turnTokens, vocabulary, 1000 + options.turns + 1)) histories[0]!.push(token);
    const alonePrompt = prefix.concat(histories[0]!);
    const aloneTurn = await timeToFirstToken(server, model, alonePrompt, options.outputTokens);
    const aloneCold = await timeToFirstToken(server, model, randomPrompt(alonePrompt.length, vocabulary, 78_000), options.outputTokens);
    const alone = { promptTokens: alonePrompt.length, cachedTokens: aloneTurn.cachedTokens, ttftMs: aloneTurn.ttftMs, coldMs: aloneCold.ttftMs };
    log(`${kind}: session 0 alone (${alone.promptTokens} tokens, ${alone.cachedTokens} cached): ${alone.ttftMs.toFixed(0)} ms, cold ${alone.coldMs.toFixed(0)} ms`);
    // cold prefills of each turn's length: tokens no earlier prompt started with, one at a time
    const coldMs: number[] = [0];
    for (let turn = 1; turn <= options.turns; turn++) {
      const length = options.prefixTokens + turn * options.turnTokens;
      coldMs[turn] = (await timeToFirstToken(server, model, randomPrompt(length, vocabulary, 77_000 + turn), options.outputTokens)).ttftMs;
      log(`${kind}: cold prefill of ${length} tokens: first token after ${coldMs[turn]!.toFixed(0)} ms`);
    }
    let cacheBytes: number | undefined;
    if (kind === "llamux") {
      const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
      cacheBytes = [...metrics.matchAll(/^llamux:prompt_cache_bytes\{[^}]*\} (\S+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    }
    return { kind, turns, coldMs, alone, ...(cacheBytes !== undefined ? { cacheBytes } : {}) };
  } finally {
    await server.stop();
  }
}

/** Runs the scenario on llamux and, when built, llama-server; returns the report section and its data. */
export async function runAgentSessions(model: string, options: AgentSessionsOptions): Promise<{ markdown: string; json: unknown }> {
  const kinds: ServerKind[] = existsSync(LLAMA_SERVER) ? ["llamux", "llama-server"] : ["llamux"];
  const results: ServerResult[] = [];
  for (const kind of kinds) results.push(await runOne(kind, model, options));
  const llamux = results[0]!;
  const server = results.find((r) => r.kind === "llama-server");
  const rows: string[] = [];
  let goalsMet = true;
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
      if (result === llamux && turn > 1 && worst / cold > 0.1) goalsMet = false;
    }
    let versus = "";
    if (server) {
      const p50 = (r: ServerResult) => percentile(r.turns.filter((t) => t.turn === turn).map((t) => t.ttftMs), 50);
      const ratio = p50(llamux) / p50(server);
      versus = ` | ${ratio.toFixed(2)}`;
      if (turn > 1 && ratio > 1) goalsMet = false;
    }
    rows.push(`| ${turn} | ${options.prefixTokens + turn * options.turnTokens} | ${cells.join(" | ")}${versus} |`);
  }
  const header = results.map((r) => `${r.kind} cached | p50 ms | worst ms | cold ms | worst ÷ cold`).join(" | ");
  const memory = llamux.cacheBytes !== undefined
    ? `llamux's prompt cache held ${(llamux.cacheBytes / 1048576).toFixed(1)} MiB at the end (bound ${options.cacheRamMiB} MiB).`
    : "";
  const aloneLines = results.map((r) => `- ${r.kind}: ${r.alone.ttftMs.toFixed(0)} ms (${r.alone.cachedTokens} of ${r.alone.promptTokens} tokens cached) against a cold prefill of ${r.alone.coldMs.toFixed(0)} ms: ${(r.alone.ttftMs / r.alone.coldMs).toFixed(3)}`);
  const markdown = [
    `### Agent sessions: ${options.sessions} sessions over ${options.parallel} sequences, ${options.prefixTokens}-token shared prefix, +${options.turnTokens} tokens a turn, ${options.turns} turns, ${options.outputTokens} tokens out, --cache-ram ${options.cacheRamMiB}, ${options.threads === "default" ? "each server's default" : options.threads} threads, ${options.thinkMs ? `${options.thinkMs} ms between an answer and the next turn, sessions started ${(options.thinkMs / options.sessions).toFixed(0)} ms apart` : "every turn sent at once"}`,
    "",
    `| turn | prompt tokens | ${header}${server ? " | llamux p50 ÷ llama-server p50" : ""} |`,
    `|---|---|${results.map(() => "---|---|---|---|---|").join("")}${server ? "---|" : ""}`,
    ...rows,
    "",
    `Goal (turns 2 and later): worst ÷ cold ≤ 0.10 for every session${server ? ", and llamux p50 ≤ llama-server p50" : ""}: ${goalsMet ? "met" : "NOT met"}. ${memory}`,
    "",
    `Session 0's turn ${options.turns + 1} alone on the idle server afterwards (the cache without queueing behind other sessions):`,
    "",
    ...aloneLines,
    ...(server ? [] : ["", "llama-server not built (make llama-tools): llamux only."]),
  ].join("\n");
  return { markdown, json: { shape: { ...options, llamux: undefined, log: undefined }, results, goalsMet } };
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      model: { type: "string" }, sessions: { type: "string" }, parallel: { type: "string" }, prefix: { type: "string" }, "turn-tokens": { type: "string" },
      turns: { type: "string" }, output: { type: "string" }, "cache-ram": { type: "string" }, threads: { type: "string" }, "lib-dir": { type: "string" }, "think-ms": { type: "string" },
      help: { type: "boolean", short: "h" },
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
  --lib-dir DIR      llama.cpp libraries llamux runs on (LLAMUX_LIB_DIR; default its own); llama-server
                     is .native/tools/llama-server, or LLAMUX_TOOLS_DIR's
  --think-ms N       an agent's time between an answer and its next turn, sessions started N / sessions ms
                     apart (default 0: every turn at once, all sessions together)`);
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
    ...shape,
    llamux: defaultLlamuxCommand(), ...(values["lib-dir"] ? { llamuxLibDir: values["lib-dir"] } : {}), log: (line) => console.error(line),
  });
  console.log(result.markdown);
}
