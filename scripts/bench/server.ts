// The whole server against llama-server built from the same llama.cpp source (`make llama-tools`): both
// started on the same model with the same threads and 8 sequences, the same sampler chain sent in every
// request, streaming clients over real HTTP. Measures throughput, time to first token, inter-token
// latency, cold start (spawn to the first answered request, each server at its default context) and
// constrained decoding (a JSON schema and a forced tool call) on both.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TOOLS_DIR } from "./llama-tools.ts";
import { freePort } from "./free-port.ts";
import { toolCallGrammar } from "../../src/chat/structured/tool-call-grammar.ts";

export const LLAMA_SERVER = join(TOOLS_DIR, "llama-server");
const REPO_ROOT = join(import.meta.dir, "..", "..");
const BUN = process.execPath;
const LOAD_TIMEOUT_MS = 180_000;

export type ServerKind = "llamux" | "llama-server";

/** Servers still running: killed if the benchmark ends early (an error, Ctrl-C), so none is left behind. */
const running = new Set<ReturnType<typeof Bun.spawn>>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => process.exit(130));
}

/** The sampler chains the comparison runs: llama.cpp's top-k chain and vLLM's defaults (whole vocabulary). */
export const SAMPLER_CHAINS = {
  "top-k": { temperature: 1, top_k: 40, top_p: 1, min_p: 0 },
  full: { temperature: 1, top_k: 0, top_p: 1, min_p: 0 },
} as const;
export type SamplerChainName = keyof typeof SAMPLER_CHAINS;

/** How llamux is started: the command before `serve` (bun src/main.ts, or an executable) and its environment. */
export interface LlamuxCommand {
  command: string[];
  /** LLAMUX_LIB_DIR for the checkout; empty for an executable (it runs on the libraries it embeds). */
  env: Record<string, string>;
}

export interface ServerSpec {
  model: string;
  /** "default": each server picks its own (the busy-machine part compares the defaults). */
  threads: number | "default";
  /** Sequences; left out, each server's default. */
  parallel?: number;
  llamux: LlamuxCommand;
  /** llamux: the name it serves the model under (requests and the readiness probe use it). */
  servedModelName?: string;
  /**
   * llamux: the directory of its disk tier (`--cache-disk`), kept across restarts. Left out, each start gets
   * an empty one of its own (LLAMUX_CACHE_DISK), removed when it stops: the server's defaults on a fresh
   * machine, and no state from an earlier run (the benchmarks' prompts repeat from run to run).
   */
  cacheDiskDir?: string;
  /**
   * Context per sequence for both servers; left out, each takes its own default (the cold-start row).
   * The loads give both the same: llama-server's default (the trained context for every slot) does not
   * fit a 1B model's 8 slots in 24 GB, and a swapping server measures the disk.
   */
  contextPerSequence?: number;
  /** Flags both servers take alike, appended (the agents part's --cache-ram). */
  extraArgs?: string[];
}

export interface RunningServer {
  kind: ServerKind;
  baseUrl: string;
  /** SIGTERM, then SIGKILL after `graceMs` (default 10 s). */
  stop(graceMs?: number): Promise<void>;
}


/** The command line of each server at its defaults, apart from model, port, threads and sequences. */
export function serverArgv(kind: ServerKind, spec: ServerSpec, port: number): string[] {
  const context = spec.contextPerSequence;
  if (kind === "llama-server") {
    // -c is the total over the slots (one KV stream per slot without -kvu)
    const parallel = spec.parallel ?? 1;
    return [LLAMA_SERVER, "-m", spec.model, "--host", "127.0.0.1", "--port", String(port), ...(spec.threads === "default" ? [] : ["-t", String(spec.threads)]), "-np", String(parallel), "--no-webui",
      ...(context ? ["-c", String(context * parallel)] : []), ...(spec.extraArgs ?? [])];
  }
  return [...spec.llamux.command, "serve", spec.model, "--profile", "b", "--host", "127.0.0.1", "--port", String(port), ...(spec.threads === "default" ? [] : ["--threads", String(spec.threads)]),
    ...(spec.parallel ? ["--parallel", String(spec.parallel)] : []), ...(context ? ["--max-model-len", String(context)] : []),
    ...(spec.servedModelName ? ["--served-model-name", spec.servedModelName] : []), ...(spec.cacheDiskDir ? ["--cache-disk", spec.cacheDiskDir] : []), ...(spec.extraArgs ?? [])];
}

/** llamux from this checkout (bun src/main.ts), or the executable given, on `libDir`'s libraries when given. */
export function defaultLlamuxCommand(binary?: string, libDir?: string): LlamuxCommand {
  return { command: binary ? [binary] : [BUN, join(REPO_ROOT, "src", "main.ts")], env: libDir ? { LLAMUX_LIB_DIR: libDir } : {} };
}

/** A command line as the report shows it: the environment llamux needs first, paths from the working directory. */
export function showCommand(kind: ServerKind, spec: ServerSpec): string {
  const env = kind === "llamux" ? Object.entries(spec.llamux.env).map(([name, value]) => `${name}=${value} `).join("") : "";
  return `${env}${serverArgv(kind, spec, 0).join(" ").replace("--port 0", "--port PORT")}`.replace(BUN, "bun").replaceAll(`${process.cwd()}/`, "");
}

/** Starts a server and resolves once it answered a one-token completion; `readyMs` is spawn to that answer. */
export async function startServer(kind: ServerKind, spec: ServerSpec): Promise<RunningServer & { readyMs: number }> {
  const port = await freePort();
  const argv = serverArgv(kind, spec, port);
  const freshDiskTier = kind === "llamux" && !spec.cacheDiskDir ? mkdtempSync(join(tmpdir(), "llamux-bench-disk-")) : undefined;
  const env: Record<string, string | undefined> = { ...process.env, LLAMUX_LOG_LEVEL: "warn", LLAMUX_PERSONA: "llamux" };
  // an executable given the checkout's LLAMUX_LIB_DIR would not run on its own libraries
  if (kind === "llamux") delete env.LLAMUX_LIB_DIR;
  const started = performance.now();
  const child = Bun.spawn(argv, {
    env: { ...env, ...(kind === "llamux" ? spec.llamux.env : {}), ...(freshDiskTier ? { LLAMUX_CACHE_DISK: freshDiskTier } : {}) },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  running.add(child);
  let stderr = "";
  void (async () => {
    for await (const chunk of child.stderr) stderr = (stderr + new TextDecoder().decode(chunk)).slice(-4000);
  })();
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async (graceMs = 10_000) => {
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await child.exited;
    clearTimeout(timer);
    running.delete(child);
    if (freshDiskTier) rmSync(freshDiskTier, { recursive: true, force: true });
  };
  while (true) {
    if (child.exitCode !== null) throw new Error(`${kind} exited with status ${child.exitCode} before answering: ${stderr.trim().split("\n").slice(-3).join(" | ")}`);
    if (performance.now() - started > LOAD_TIMEOUT_MS) {
      await stop();
      throw new Error(`${kind} did not answer within ${LOAD_TIMEOUT_MS / 1000} s`);
    }
    try {
      const response = await fetch(`${baseUrl}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: spec.servedModelName ?? spec.model, prompt: "Hello", max_tokens: 1, temperature: 0 }),
        signal: AbortSignal.timeout(30_000),
      });
      if (response.ok) {
        await response.arrayBuffer();
        return { kind, baseUrl, stop, readyMs: performance.now() - started };
      }
      await response.arrayBuffer();
    } catch {
      // not listening yet
    }
    await Bun.sleep(20);
  }
}

/** Random token ids from a seed, away from the special tokens at both ends of the vocabulary. */
export function randomPrompt(length: number, vocabularySize: number, seed: number): number[] {
  let state = seed >>> 0 || 1;
  return Array.from({ length }, () => {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return 1000 + (state % (vocabularySize - 2000));
  });
}

export interface StreamTiming {
  sentAt: number;
  /** arrival times of the chunks that carried generated text */
  chunkTimes: number[];
  endAt: number;
  completionTokens: number;
  text: string;
  /** a chunk carried tool_calls: the server parsed a call out of the reply */
  calledTool: boolean;
  /** prompt tokens the server took from its cache, when its final usage says (prompt_tokens_details.cached_tokens) */
  cachedTokens?: number;
}

/** POSTs a streaming request and times its chunks; completion tokens come from the final usage chunk. */
export async function streamRequest(baseUrl: string, path: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<StreamTiming> {
  const sentAt = performance.now();
  // A fresh connection per request: llama-server closes idle keep-alive connections, and a reused one
  // then fails with ECONNRESET.
  const response = await fetch(`${baseUrl}${path}`, {
    method: "POST",
    keepalive: false,
    headers: { "content-type": "application/json", connection: "close", ...headers },
    body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }),
    // Bun's fetch gives up after 300 s without an answer; a request queued behind long prefills may wait longer
    timeout: false,
  } as RequestInit);
  if (!response.ok || !response.body) throw new Error(`${path} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  const timing: StreamTiming = { sentAt, chunkTimes: [], endAt: 0, completionTokens: 0, text: "", calledTool: false };
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const bytes of response.body) {
    const now = performance.now();
    buffer += decoder.decode(bytes, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") continue;
      const chunk = JSON.parse(data) as {
        choices?: Array<{ text?: string; delta?: { content?: string | null; tool_calls?: Array<{ function?: { arguments?: string } }> } }>;
        usage?: { completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } } | null;
      };
      const choice = chunk.choices?.[0];
      if (choice?.delta?.tool_calls?.length) timing.calledTool = true;
      const piece = choice?.text ?? choice?.delta?.content ?? choice?.delta?.tool_calls?.[0]?.function?.arguments ?? "";
      if (piece) {
        timing.chunkTimes.push(now);
        timing.text += piece;
      }
      if (chunk.usage?.completion_tokens !== undefined) timing.completionTokens = chunk.usage.completion_tokens;
      if (chunk.usage?.prompt_tokens_details?.cached_tokens !== undefined) timing.cachedTokens = chunk.usage.prompt_tokens_details.cached_tokens;
    }
  }
  timing.endAt = performance.now();
  return timing;
}

export interface LoadShape {
  clients: number;
  requestsPerClient: number;
  promptTokens: number;
  outputTokens: number;
  chain: SamplerChainName;
}

export interface LoadResult {
  tokensPerSecond: number;
  ttftMs: number[];
  interTokenMs: number[];
  completionTokens: number;
}

/**
 * `clients` streaming clients, each sending `requestsPerClient` completions one after another, prompts
 * of random token ids (a new seed per request, so no prompt is a cached prefix of another).
 */
export async function runLoad(server: RunningServer, model: string, vocabularySize: number, shape: LoadShape, seedBase: number): Promise<LoadResult> {
  const started = performance.now();
  const timings: StreamTiming[] = [];
  await Promise.all(Array.from({ length: shape.clients }, async (_, client) => {
    for (let r = 0; r < shape.requestsPerClient; r++) {
      const seed = seedBase + client * 1000 + r;
      timings.push(await streamRequest(server.baseUrl, "/v1/completions", {
        model, prompt: randomPrompt(shape.promptTokens, vocabularySize, seed), max_tokens: shape.outputTokens,
        ignore_eos: true, seed, ...SAMPLER_CHAINS[shape.chain],
      }));
    }
  }));
  const ended = performance.now();
  const completionTokens = timings.reduce((sum, t) => sum + t.completionTokens, 0);
  const expected = shape.clients * shape.requestsPerClient * shape.outputTokens;
  if (completionTokens !== expected) throw new Error(`${server.kind} generated ${completionTokens} tokens, expected ${expected}`);
  return {
    tokensPerSecond: completionTokens / ((ended - started) / 1000),
    ttftMs: timings.map((t) => (t.chunkTimes[0] ?? t.endAt) - t.sentAt),
    interTokenMs: timings.flatMap((t) => t.chunkTimes.slice(1).map((time, i) => time - t.chunkTimes[i]!)),
    completionTokens,
  };
}

/** A JSON schema and a forced tool call: the grammar-constrained paths a client takes most. */
export const CONSTRAINED_SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string" },
    age: { type: "integer" },
    tags: { type: "array", items: { type: "string" } },
  },
  required: ["name", "age", "tags"],
};

export type ConstrainedMode = "none" | "json-schema" | "tool-call" | "tool-grammar";

const RECORD_TOOL = { type: "function" as const, function: { name: "record_person", description: "Store a person", parameters: CONSTRAINED_SCHEMA } };

/**
 * The grammar llamux forces a call of record_person with (LFM2 syntax), given as it is to both servers:
 * the same constraint on the same prompt, so the row compares the constrained decoding itself.
 */
export const FORCED_CALL_GRAMMAR = toolCallGrammar({ tools: [RECORD_TOOL], syntax: "lfm2", choice: { name: "record_person" } });

/**
 * One chat request with `mode`'s constraint; llama-server gets the schema in its own `json_schema` field
 * (its response_format support is the same grammar). Rate: completion tokens over the whole request.
 */
export async function runConstrained(server: RunningServer, model: string, mode: ConstrainedMode, outputTokens: number, seed: number): Promise<{ tokensPerSecond: number; tokens: number; seconds: number; called: boolean }> {
  const body: Record<string, unknown> = {
    model, max_tokens: outputTokens, seed, ...SAMPLER_CHAINS["top-k"],
    messages: [{ role: "user", content: `Describe person number ${seed} as JSON.` }],
  };
  if (mode === "tool-grammar") {
    const prompt = `<|im_start|>system\nList of tools: <|tool_list_start|>[${JSON.stringify(RECORD_TOOL.function)}]<|tool_list_end|><|im_end|>\n`
      + `<|im_start|>user\nDescribe person number ${seed} as JSON.<|im_end|>\n<|im_start|>assistant\n`;
    const grammarField = server.kind === "llama-server" ? { grammar: FORCED_CALL_GRAMMAR } : { structured_outputs: { grammar: FORCED_CALL_GRAMMAR } };
    const t = await streamRequest(server.baseUrl, "/v1/completions", { model, prompt, max_tokens: outputTokens, seed, ...SAMPLER_CHAINS["top-k"], ...grammarField });
    return { ...wholeRequestRate(t), called: t.text.includes("record_person(") };
  }
  if (mode === "json-schema") {
    if (server.kind === "llama-server") body.json_schema = CONSTRAINED_SCHEMA;
    else body.response_format = { type: "json_schema", json_schema: { name: "person", schema: CONSTRAINED_SCHEMA } };
  } else if (mode === "tool-call") {
    // One tool and tool_choice "required", what a client sends to force that tool. A named choice
    // ({type:"function",function:{name}}) would not reach llama-server's grammar at all: it reads
    // tool_choice as a string only and takes an object for "auto". (Its "required" grammar for LFM2 still
    // allows text before the call; `called` shows whether a reply carried one.)
    body.tools = [RECORD_TOOL];
    body.tool_choice = "required";
  } else {
    body.ignore_eos = true;
  }
  const t = await streamRequest(server.baseUrl, "/v1/chat/completions", body);
  return { ...wholeRequestRate(t), called: t.calledTool };
}

/**
 * Completion tokens over the whole request: a server may hold a tool call back and send it in one chunk
 * at the end, so the time from the first chunk says nothing there. The prompt is a few dozen tokens on both.
 */
function wholeRequestRate(t: StreamTiming): { tokensPerSecond: number; tokens: number; seconds: number } {
  const seconds = (t.endAt - t.sentAt) / 1000;
  return { tokensPerSecond: seconds > 0 ? t.completionTokens / seconds : 0, tokens: t.completionTokens, seconds };
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}
