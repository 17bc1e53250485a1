// `make bench` part "prefill" (issue 34): a short request sent during a long prefill. One client sends a
// long prompt (30k tokens by default) and, a second later, another client sends a short one (20 tokens);
// the short request's time to first token is what a user waiting behind someone's long agent prompt sees.
// Its baseline is the same short request on the idle server. llamux and llama-server (same source, same
// model, context, sequences and threads; each at its own batch size) run side by side, both started once
// and measured in turn, the order alternating between runs. Prompts are random token ids, a new seed every
// time, so nothing comes from a cache.
// With a warm prefix (--warm N, issue 42's warm turns behind cold prompts): one sequence, both servers with
// --cache-ram 8192, and the short request continues an N-token history the server processed just before
// (an agent's next turn), so it can only come early by taking the long prefill's sequence; its baseline is
// the same kind of turn on the idle server.
// Run alone: bun scripts/bench/long-prefill.ts --help
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { ensureModel } from "../gen-models.ts";
import { readGgufHeaderSync, type GgufArray } from "../../src/store/gguf.ts";
import { summarize } from "./stats.ts";
import { LLAMA_SERVER, defaultLlamuxCommand, randomPrompt, showCommand, startServer, streamRequest, type LlamuxCommand, type RunningServer, type ServerKind, type ServerSpec } from "./server.ts";

export interface LongPrefillOptions {
  /** Tokens of the long prompt. */
  longTokens: number;
  /** Tokens of the short prompt. */
  shortTokens: number;
  /** Milliseconds between sending the long request and the short one. */
  delayMs: number;
  /** Tokens the short request generates. */
  outputTokens: number;
  /** Context per sequence of both servers (2 sequences: the long and the short request; 1 with a warm prefix). */
  contextPerSequence: number;
  /** Tokens of a history the short request continues, processed just before (0: a cold short request). */
  warmPrefix?: number;
  threads: number;
  runs: number;
  /** How llamux starts (the command, and LLAMUX_LIB_DIR for the checkout). */
  llamux: LlamuxCommand;
  log?: (line: string) => void;
}

interface RunSample {
  /** The short request alone on the idle server. */
  aloneMs: number;
  /** The short request sent `delayMs` into the long prefill. */
  duringMs: number;
  /** The long request's time to first token (its whole prefill). */
  longMs: number;
  /** Whether the short request's first token came before the long one's. */
  overtook: boolean;
}

function vocabularySize(path: string): number {
  const header = readGgufHeaderSync(path, { maxArrayLength: 0 });
  return (header.metadata.get("tokenizer.ggml.tokens") as GgufArray | undefined)?.length ?? 32_000;
}

async function firstTokenMs(server: RunningServer, model: string, prompt: number[], maxTokens: number): Promise<{ ms: number; at: number }> {
  // special tokens as text: a random model may pick one, and llamux (as vLLM) sends no chunk for an empty piece
  const t = await streamRequest(server.baseUrl, "/v1/completions", { model, prompt, max_tokens: maxTokens, temperature: 0, ignore_eos: true, skip_special_tokens: false });
  const at = t.chunkTimes[0] ?? t.endAt;
  return { ms: at - t.sentAt, at };
}

async function measureOnce(server: RunningServer, model: string, vocabulary: number, o: LongPrefillOptions, seed: number): Promise<RunSample> {
  // with a warm prefix, each short request is a next turn of a history the server holds
  const history = o.warmPrefix ? randomPrompt(o.warmPrefix, vocabulary, seed + 3) : [];
  const short = (s: number) => [...history, ...randomPrompt(o.shortTokens, vocabulary, s)];
  if (history.length > 0) await firstTokenMs(server, model, history, 1);
  const alone = await firstTokenMs(server, model, short(seed), o.outputTokens);
  const long = firstTokenMs(server, model, randomPrompt(o.longTokens, vocabulary, seed + 1), 1);
  // the scenario: the short request arrives this long after the long one was sent
  await Bun.sleep(o.delayMs);
  const during = await firstTokenMs(server, model, short(seed + 2), o.outputTokens);
  const longDone = await long;
  return { aloneMs: alone.ms, duringMs: during.ms, longMs: longDone.ms, overtook: during.at < longDone.at };
}

/** Both servers (llama-server when built), `runs` interleaved rounds; returns the report section and its data. */
export async function runLongPrefill(model: string, o: LongPrefillOptions): Promise<{ markdown: string; json: unknown; commands: string[] }> {
  const log = o.log ?? (() => {});
  const vocabulary = vocabularySize(model);
  const kinds: ServerKind[] = existsSync(LLAMA_SERVER) ? ["llamux", "llama-server"] : ["llamux"];
  const warm = (o.warmPrefix ?? 0) > 0;
  const spec: ServerSpec = {
    model, threads: o.threads, parallel: warm ? 1 : 2, llamux: o.llamux, contextPerSequence: o.contextPerSequence,
    ...(warm ? { extraArgs: ["--cache-ram", "8192"] } : {}),
  };
  const servers: RunningServer[] = [];
  const samples = new Map<ServerKind, RunSample[]>(kinds.map((k) => [k, []]));
  try {
    for (const kind of kinds) servers.push(await startServer(kind, spec));
    for (let run = 1; run <= o.runs; run++) {
      const order = run % 2 === 1 ? servers : [...servers].reverse();
      for (const server of order) {
        const sample = await measureOnce(server, model, vocabulary, o, run * 10);
        samples.get(server.kind)!.push(sample);
        log(`[run ${run}] ${server.kind}: short alone ${sample.aloneMs.toFixed(0)} ms, during the long prefill ${sample.duringMs.toFixed(0)} ms, long prefill ${(sample.longMs / 1000).toFixed(1)} s${sample.overtook ? "" : " (short waited for the long one)"}`);
      }
    }
  } finally {
    for (const server of servers) await server.stop();
  }
  const median = (kind: ServerKind, pick: (s: RunSample) => number) => summarize(samples.get(kind)!.map(pick))?.median ?? NaN;
  const row = (kind: ServerKind) => {
    const during = median(kind, (s) => s.duringMs);
    const alone = median(kind, (s) => s.aloneMs);
    const overtook = samples.get(kind)!.filter((s) => s.overtook).length;
    return `| ${kind} | ${alone.toFixed(0)} | ${during.toFixed(0)} | ${(during / alone).toFixed(1)} | ${(median(kind, (s) => s.longMs) / 1000).toFixed(1)} | ${overtook}/${o.runs} |`;
  };
  const both = kinds.length === 2;
  const ratio = both ? median("llamux", (s) => s.duringMs) / median("llama-server", (s) => s.duringMs) : NaN;
  const commands = kinds.map((kind) => showCommand(kind, spec));
  const what = warm
    ? `Warm turn during a long prefill: ${o.shortTokens} new tokens after a ${o.warmPrefix}-token history the server just processed, sent ${o.delayMs / 1000} s into a ${o.longTokens}-token prefill, ${o.outputTokens} tokens out, 1 sequence of ${o.contextPerSequence} tokens, --cache-ram 8192`
    : `Short request during a long prefill: ${o.shortTokens}-token request sent ${o.delayMs / 1000} s into a ${o.longTokens}-token prefill, ${o.outputTokens} tokens out, 2 sequences of ${o.contextPerSequence} tokens`;
  const markdown = [
    `### ${what}, ${o.threads} threads, median of ${o.runs}`,
    "",
    "| server | short alone: TTFT ms | short during the prefill: TTFT ms | ÷ alone | long prefill s | short first |",
    "|---|---:|---:|---:|---:|---:|",
    ...kinds.map(row),
    "",
    both ? `llamux ÷ llama-server, short request's TTFT during the prefill: ${ratio.toFixed(3)}` : "llama-server not built (make llama-tools): llamux only.",
    "",
    "Server commands (port 0 stands for a free port):",
    ...commands.map((c) => `    ${c}`),
  ].join("\n");
  return { markdown, json: { options: { ...o, llamux: undefined, log: undefined }, samples: Object.fromEntries(samples), ratio }, commands };
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      model: { type: "string" }, long: { type: "string" }, short: { type: "string" }, delay: { type: "string" }, output: { type: "string" },
      ctx: { type: "string" }, threads: { type: "string" }, runs: { type: "string" }, "lib-dir": { type: "string" }, warm: { type: "string" },
      llamux: { type: "string" }, help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(`Usage: bun scripts/bench/long-prefill.ts [options]     (make bench, part prefill)
A short request's time to first token when it arrives during another request's long prefill, and alone,
on llamux and on llama-server (.native/tools, or LLAMUX_TOOLS_DIR) side by side.
  --model PATH     the model (default: the generated tiny-llama-agent, 64k trained context; the
                   LFM2-350M shape's 30k prefill takes about 15 minutes on two busy cores)
  --long N         tokens of the long prompt (default 30000)
  --short N        tokens of the short prompt (default 20)
  --delay S        seconds between the long request and the short one (default 1)
  --output N       tokens the short request generates (default 4)
  --ctx N          context per sequence of both servers, 2 sequences (default 32768)
  --threads N      threads of both servers (default 2)
  --runs N         interleaved runs, median reported (default 3)
  --warm N         the short request continues an N-token history processed just before (an agent's
                   next turn); both servers then have one sequence and --cache-ram 8192 (default 0: off)
  --llamux PATH    a llamux executable (dist/llamux-<version>-linux-x64) instead of bun src/main.ts
  --lib-dir DIR    llama.cpp libraries llamux runs on (LLAMUX_LIB_DIR; default its own)`);
    process.exit(0);
  }
  const numbers = { long: Number(values.long ?? 30_000), short: Number(values.short ?? 20), output: Number(values.output ?? 4), ctx: Number(values.ctx ?? 32_768), threads: Number(values.threads ?? 2), runs: Number(values.runs ?? 3) };
  const delay = Number(values.delay ?? 1);
  const warmPrefix = Number(values.warm ?? 0);
  const bad = Object.entries(numbers).filter(([, n]) => !(Number.isInteger(n) && n >= 1)).map(([k]) => `--${k} must be a positive integer`);
  if (!(delay >= 0)) bad.push("--delay must be a number of seconds");
  if (!(Number.isInteger(warmPrefix) && warmPrefix >= 0)) bad.push("--warm must be a whole number of tokens");
  if (Math.max(numbers.long, warmPrefix + numbers.short + numbers.output) + 1 > numbers.ctx) bad.push("--ctx must hold the long prompt and the warm turn");
  if (bad.length > 0) {
    console.error(bad.join("\n"));
    process.exit(2);
  }
  const model = values.model ?? await ensureModel("tiny-llama-agent");
  const result = await runLongPrefill(model, {
    longTokens: numbers.long, shortTokens: numbers.short, delayMs: delay * 1000, outputTokens: numbers.output, contextPerSequence: numbers.ctx,
    threads: numbers.threads, runs: numbers.runs, llamux: defaultLlamuxCommand(values.llamux, values["lib-dir"]), warmPrefix,
    log: (line) => console.error(line),
  });
  console.log(result.markdown);
}
