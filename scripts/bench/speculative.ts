// Speculative decoding benchmark (`bun scripts/bench.ts --only speculative`): whole servers over HTTP,
// llamux (profile b) and llama-server with the same model, draft and settings, 1, 4 and 8 concurrent
// greedy streams, plain decoding against each way of speculating:
//   draft       the small random-weight draft with the target's vocabulary (acceptance near zero:
//               random weights agree on nothing, so this measures what back-off saves)
//   self-draft  the target as its own draft (every draft accepted: the mechanism's ceiling, and its
//               overhead, since the "draft" costs as much as the target)
//   ngram       prompt lookup on an ordinary prompt (random output rarely repeats its prompt)
//   ngram-copy  prompt lookup on a prompt the output copies (the copy is forced: a grammar spells the
//               passage again and a logit bias leaves only its tokens, as a model quoting its input would);
//               compared with plain-copy, the same requests decoded plainly (the grammar and the bias
//               over the whole vocabulary make every token dearer than in the other cases)
//   ngram-mixed prompt lookup where only part of each draft is kept: the passage is copied again and
//               again, but each word may come in either of two spellings (both in the prompt) and the
//               model picks one each time, so a draft from an earlier copy holds only while the picks
//               agree (acceptance in between the other cases); compared with plain-mixed
//   ngram-near-copy  the same with one word in four free to take either spelling and the others fixed:
//               most of each draft holds (acceptance between ngram-mixed and ngram-copy); compared with
//               plain-near-copy
// Throughput is completion tokens over wall time; acceptance is accepted / drafted tokens
// (llamux: /metrics; llama-server: each response's timings.draft_n and draft_n_accepted).
//
// Paired measurement (`measurePair`): on a shared machine the same load can run 25% faster or slower a
// few minutes later, more than the effect measured. So a case and its baseline run side by side: two
// servers (plain, and speculating) stay up, each pair of loads goes plain then speculating or the other
// way round, and the ratio reported is the median of the pairs' own ratios.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.ts";
import { LLAMA_SERVER, type LlamuxCommand } from "./server.ts";
import { summarize } from "./stats.ts";

export interface SpeculativeBenchModel {
  name: string;
  path: string;
  draftPath: string;
}

export interface SpeculativeBenchOptions {
  threads: number;
  tokens: number;
  streams: number[];
  draftTokens: number;
  contextPerSequence: number;
}

export type CaseName = "plain" | "draft" | "self-draft" | "ngram" | "plain-copy" | "ngram-copy" | "plain-mixed" | "ngram-mixed" | "plain-near-copy" | "ngram-near-copy";
export const CASES: CaseName[] = ["plain", "draft", "self-draft", "ngram", "plain-copy", "ngram-copy", "plain-mixed", "ngram-mixed", "plain-near-copy", "ngram-near-copy"];
/** What a case's speed is compared with: plain decoding of the same requests. */
const BASELINE: Record<CaseName, CaseName> = {
  plain: "plain", draft: "plain", "self-draft": "plain", ngram: "plain", "plain-copy": "plain-copy", "ngram-copy": "plain-copy",
  "plain-mixed": "plain-mixed", "ngram-mixed": "plain-mixed", "plain-near-copy": "plain-near-copy", "ngram-near-copy": "plain-near-copy",
};

/** Whether the case is plain decoding that others are compared with. */
export function isBaseline(name: CaseName): boolean {
  return BASELINE[name] === name;
}

/** The copying cases whose words may take either spelling: one word in this many is free (the others keep the passage's). */
const FREE_WORD_EVERY: Partial<Record<CaseName, number>> = { "plain-mixed": 1, "ngram-mixed": 1, "plain-near-copy": 4, "ngram-near-copy": 4 };

/** The cases with each one's baseline added, in CASES order. */
export function withBaselines(cases: CaseName[]): CaseName[] {
  const wanted = new Set(cases.flatMap((c) => [c, BASELINE[c]]));
  return CASES.filter((c) => wanted.has(c));
}

export const PASSAGE = " alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega";
export const STORY = "Write a long story about a lighthouse keeper who finds a map in a bottle, and what happens next:";


interface Running { url: string; stop(): Promise<void> }

async function startProcess(argv: string[], url: string, env: Record<string, string> = {}): Promise<Running> {
  const inherited: Record<string, string | undefined> = { ...process.env };
  // an executable given the checkout's LLAMUX_LIB_DIR would not run on its own libraries
  delete inherited.LLAMUX_LIB_DIR;
  // an empty disk tier of its own: no state from an earlier run (the prompts repeat from run to run)
  const disk = mkdtempSync(join(tmpdir(), "llamux-bench-disk-"));
  const child = Bun.spawn(argv, { env: { ...inherited, LLAMUX_CACHE_DISK: disk, ...env }, stdout: "ignore", stderr: "pipe" });
  const removeDisk = () => rmSync(disk, { recursive: true, force: true });
  let stderr = "";
  void (async () => {
    for await (const chunk of child.stderr) stderr = (stderr + new TextDecoder().decode(chunk)).slice(-4000);
  })();
  const deadline = Date.now() + 300_000;
  for (;;) {
    if (child.exitCode !== null) {
      removeDisk();
      throw new Error(`${argv[0]} exited: ${stderr}`);
    }
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      removeDisk();
      throw new Error(`${argv[0]} did not start: ${stderr}`);
    }
    await Bun.sleep(100);
  }
  return { url, async stop() { child.kill("SIGTERM"); await child.exited; removeDisk(); } };
}

/** The command line of one server for one case (shown in the report, and run). */
export function serverArgs(server: "llamux" | "llama-server", model: SpeculativeBenchModel, name: CaseName, o: SpeculativeBenchOptions, port: number, parallel: number, llamux: LlamuxCommand): string[] {
  const n = String(o.draftTokens);
  if (server === "llamux") {
    const spec: Record<CaseName, string[]> = {
      plain: [],
      "plain-copy": [],
      draft: ["--model-draft", model.draftPath, "--draft-max", n],
      "self-draft": ["--model-draft", model.path, "--draft-max", n],
      ngram: ["--speculative-config", JSON.stringify({ method: "ngram", num_speculative_tokens: o.draftTokens, prompt_lookup_max: 3, prompt_lookup_min: 1 })],
      "ngram-copy": ["--speculative-config", JSON.stringify({ method: "ngram", num_speculative_tokens: o.draftTokens, prompt_lookup_max: 3, prompt_lookup_min: 1 })],
      "plain-mixed": [],
      "ngram-mixed": ["--speculative-config", JSON.stringify({ method: "ngram", num_speculative_tokens: o.draftTokens, prompt_lookup_max: 3, prompt_lookup_min: 1 })],
      "plain-near-copy": [],
      "ngram-near-copy": ["--speculative-config", JSON.stringify({ method: "ngram", num_speculative_tokens: o.draftTokens, prompt_lookup_max: 3, prompt_lookup_min: 1 })],
    };
    return [...llamux.command, "serve", "--profile", "b", model.path, "--port", String(port), "--threads", String(o.threads),
      "--ctx-size", String(o.contextPerSequence), "--parallel", String(parallel), ...spec[name]];
  }
  const spec: Record<CaseName, string[]> = {
    plain: [],
    "plain-copy": [],
    // -md alone loads the draft but does not speculate at this source: --spec-type turns it on
    draft: ["-md", model.draftPath, "--spec-type", "draft-simple", "--spec-draft-n-max", n],
    "self-draft": ["-md", model.path, "--spec-type", "draft-simple", "--spec-draft-n-max", n],
    ngram: ["--spec-type", "ngram-simple", "--spec-ngram-simple-size-n", "3", "--spec-ngram-simple-size-m", n],
    "ngram-copy": ["--spec-type", "ngram-simple", "--spec-ngram-simple-size-n", "3", "--spec-ngram-simple-size-m", n],
    "plain-mixed": [],
    "ngram-mixed": ["--spec-type", "ngram-simple", "--spec-ngram-simple-size-n", "3", "--spec-ngram-simple-size-m", n],
    "plain-near-copy": [],
    "ngram-near-copy": ["--spec-type", "ngram-simple", "--spec-ngram-simple-size-n", "3", "--spec-ngram-simple-size-m", n],
  };
  return [LLAMA_SERVER, "-m", model.path, "--host", "127.0.0.1", "--port", String(port), "-t", String(o.threads), "-c", String(o.contextPerSequence * parallel),
    "-np", String(parallel), "--temp", "0", ...spec[name]];
}

interface Completion { tokens: number; drafted: number; accepted: number }

async function tokenize(url: string, text: string): Promise<number[]> {
  const response = await fetch(`${url}/tokenize`, { method: "POST", body: JSON.stringify({ prompt: text, add_special_tokens: false, content: text, add_special: false }) });
  const body = await response.json() as { tokens: number[] };
  return body.tokens;
}

/** The copying cases' prompt: the passage, to be repeated. */
export const COPY_PROMPT = `Repeat:${PASSAGE}\nAgain:`;

/**
 * What forces a copy: the tokens outside `allowed` (the passage's own), which a logit bias bans, and how
 * many copies of the passage a grammar allows, more than `tokens` can reach, so that with ignore_eos every
 * run generates exactly `tokens` tokens.
 */
export function copyConstraint(allowed: ReadonlySet<number>, vocabularySize: number, tokens: number): { banned: number[]; copies: number } {
  const banned: number[] = [];
  for (let t = 0; t < vocabularySize; t++) if (!allowed.has(t)) banned.push(t);
  return { banned, copies: Math.ceil(tokens / Math.max(1, allowed.size)) + 1 };
}

/** The grammar of the exact copy: the passage again, up to `copies` times. */
export const copyGrammar = (copies: number) => `root ::= (${JSON.stringify(PASSAGE)}){1,${copies}}`;

/** The request body: an ordinary story prompt, or the copy prompt with its grammar and logit bias. */
async function requestBody(server: "llamux" | "llama-server", url: string, name: CaseName, tokens: number, vocabularySize: number, stream: number): Promise<Record<string, unknown>> {
  const base = { max_tokens: tokens, n_predict: tokens, temperature: 0, ignore_eos: true };
  const freeEvery = FREE_WORD_EVERY[name];
  const mixed = freeEvery !== undefined;
  if (!name.endsWith("copy") && !mixed) return { ...base, prompt: `${STORY} (${stream + 1})` };
  const words = PASSAGE.trim().split(" ");
  const text = mixed ? `${PASSAGE}${PASSAGE.toUpperCase()}` : PASSAGE;
  const { banned, copies } = copyConstraint(new Set(await tokenize(url, text)), vocabularySize, tokens);
  // OpenAI's map form for llamux (-100 bans), llama-server's [token, false] pairs (false bans)
  const bias = server === "llamux" ? Object.fromEntries(banned.map((t) => [t, -100])) : banned.map((t) => [t, false]);
  if (!mixed) return { ...base, prompt: COPY_PROMPT, grammar: copyGrammar(copies), logit_bias: bias };
  // the free words in either spelling, as the model picks; the others as in the passage
  const choices = words.map((w, i) => (i % freeEvery === 0 ? `(${JSON.stringify(` ${w}`)} | ${JSON.stringify(` ${w.toUpperCase()}`)})` : JSON.stringify(` ${w}`))).join(" ");
  return { ...base, prompt: `Repeat:${PASSAGE}\nOr:${PASSAGE.toUpperCase()}\nAgain:`, grammar: `root ::= (${choices}){1,${copies}}`, logit_bias: bias };
}

async function complete(server: "llamux" | "llama-server", url: string, body: Record<string, unknown>, model: string): Promise<Completion> {
  const path = server === "llamux" ? "/v1/completions" : "/completion";
  // a fresh connection per request: in a pair one server idles while the other works, often longer than its
  // keep-alive timeout (llamux: 30 s), and a pooled connection it closes then fails the next request
  const headers = { "content-type": "application/json", connection: "close" };
  const response = await fetch(`${url}${path}`, { method: "POST", headers, body: JSON.stringify({ ...body, model }) });
  if (!response.ok) throw new Error(`${server} ${path}: ${response.status} ${(await response.text()).slice(0, 300)}`);
  const json = await response.json() as { usage?: { completion_tokens: number }; tokens_predicted?: number; timings?: { predicted_n?: number; draft_n?: number; draft_n_accepted?: number } };
  if (server === "llamux") return { tokens: json.usage!.completion_tokens, drafted: 0, accepted: 0 };
  return { tokens: json.timings?.predicted_n ?? json.tokens_predicted ?? 0, drafted: json.timings?.draft_n ?? 0, accepted: json.timings?.draft_n_accepted ?? 0 };
}

async function llamuxDraftCounts(url: string): Promise<{ drafted: number; accepted: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const sum = (name: string) => text.split("\n").filter((l) => l.startsWith(`${name}{`)).reduce((s, l) => s + Number(l.split(" ").pop()), 0);
  return { drafted: sum("vllm:spec_decode_num_draft_tokens_total"), accepted: sum("vllm:spec_decode_num_accepted_tokens_total") };
}

export interface PairedSample {
  model: string;
  server: "llamux" | "llama-server";
  /** the llamux build's id ("release", "binary", ...); "llama-server" for llama-server */
  build: string;
  case: CaseName;
  streams: number;
  /** Medians over the pairs. */
  baselineTokensPerSecond: number;
  tokensPerSecond: number;
  /** Each pair's case ÷ baseline, in pair order. */
  ratios: number[];
  drafted: number;
  accepted: number;
}

/** The median of at least one measurement. */
const median = (values: number[]) => summarize(values)!.median;

/** One load: `streams` concurrent requests; tokens per second over its wall time, and what was drafted. */
async function runLoad(server: "llamux" | "llama-server", url: string, bodies: Record<string, unknown>[], model: string): Promise<{ tokensPerSecond: number; drafted: number; accepted: number }> {
  const before = server === "llamux" ? await llamuxDraftCounts(url) : { drafted: 0, accepted: 0 };
  const started = performance.now();
  const results = await Promise.all(bodies.map((body) => complete(server, url, body, model)));
  const seconds = (performance.now() - started) / 1000;
  const after = server === "llamux" ? await llamuxDraftCounts(url) : undefined;
  return {
    tokensPerSecond: results.reduce((sum, r) => sum + r.tokens, 0) / seconds,
    drafted: after ? after.drafted - before.drafted : results.reduce((sum, r) => sum + r.drafted, 0),
    accepted: after ? after.accepted - before.accepted : results.reduce((sum, r) => sum + r.accepted, 0),
  };
}

/**
 * A speculating case against its baseline on one server kind: both servers up at once, `pairs` loads
 * each at every stream count, alternating which goes first. Pair ratios are taken load by load.
 */
export async function measurePair(
  server: "llamux" | "llama-server", model: SpeculativeBenchModel, name: CaseName, o: SpeculativeBenchOptions, vocabularySize: number, pairs: number,
  llamux: LlamuxCommand & { id: string }, log: (line: string) => void = () => {},
): Promise<PairedSample[]> {
  const baseline = BASELINE[name];
  if (baseline === name) throw new Error(`"${name}" is a baseline: measure a speculating case against it`);
  const parallel = Math.max(...o.streams);
  const start = async (which: CaseName) => {
    const port = await freePort();
    return startProcess(serverArgs(server, model, which, o, port, parallel, llamux), `http://127.0.0.1:${port}`, { LLAMUX_LOG_LEVEL: "warn", ...(server === "llamux" ? llamux.env : {}) });
  };
  const plain = await start(baseline);
  let speculating: Running | undefined;
  const samples: PairedSample[] = [];
  try {
    speculating = await start(name);
    for (const [which, running] of [[baseline, plain], [name, speculating]] as const) {
      await complete(server, running.url, { ...(await requestBody(server, running.url, which, 8, vocabularySize, 0)), max_tokens: 8, n_predict: 8 }, model.path);
    }
    for (const streams of o.streams) {
      const bodies = async (which: CaseName, url: string) =>
        Promise.all(Array.from({ length: streams }, (_, i) => requestBody(server, url, which, o.tokens, vocabularySize, i)));
      const plainBodies = await bodies(baseline, plain.url);
      const caseBodies = await bodies(name, speculating.url);
      const plainRates: number[] = [];
      const caseRates: number[] = [];
      const ratios: number[] = [];
      let drafted = 0;
      let accepted = 0;
      for (let pair = 0; pair < pairs; pair++) {
        const loadPlain = () => runLoad(server, plain.url, plainBodies, model.path);
        const loadCase = () => runLoad(server, speculating!.url, caseBodies, model.path);
        let p: Awaited<ReturnType<typeof runLoad>>;
        let c: Awaited<ReturnType<typeof runLoad>>;
        if (pair % 2 === 0) { p = await loadPlain(); c = await loadCase(); } else { c = await loadCase(); p = await loadPlain(); }
        plainRates.push(p.tokensPerSecond);
        caseRates.push(c.tokensPerSecond);
        ratios.push(c.tokensPerSecond / p.tokensPerSecond);
        drafted += c.drafted;
        accepted += c.accepted;
        log(`  [pair ${pair + 1}] ${model.name} ${server === "llamux" ? llamux.id : server} ${name} ×${streams}: ${c.tokensPerSecond.toFixed(1)} t/s against ${baseline} ${p.tokensPerSecond.toFixed(1)} t/s (${(c.tokensPerSecond / p.tokensPerSecond).toFixed(2)}), accepted ${c.accepted}/${c.drafted}`);
      }
      samples.push({
        model: model.name, server, build: server === "llamux" ? llamux.id : "llama-server", case: name, streams, baselineTokensPerSecond: median(plainRates), tokensPerSecond: median(caseRates),
        ratios, drafted, accepted,
      });
    }
  } finally {
    await speculating?.stop();
    await plain.stop();
  }
  return samples;
}

/** The report table of paired samples: the median pair ratio and its spread, acceptance over all pairs. */
export function pairedTable(samples: PairedSample[]): string {
  const lines = [
    "| model | server (llamux build) | case | streams | baseline t/s | case t/s | × baseline (median of pairs) | pair ratios min–max | drafted | accepted | acceptance |",
    "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const s of samples) {
    const acceptance = s.drafted > 0 ? `${Math.round((100 * s.accepted) / s.drafted)}%` : "–";
    const ratio = summarize(s.ratios)!;
    lines.push(`| ${s.model} | ${s.build} | ${s.case} ÷ ${BASELINE[s.case]} | ${s.streams} | ${s.baselineTokensPerSecond.toFixed(1)} | ${s.tokensPerSecond.toFixed(1)} | ${ratio.median.toFixed(2)} | ${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)} | ${s.drafted} | ${s.accepted} | ${acceptance} |`);
  }
  return lines.join("\n");
}

export function llamaServerAvailable(): boolean {
  return existsSync(LLAMA_SERVER);
}
