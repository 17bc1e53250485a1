// Speculation against plain decoding inside one engine (run alone: `bun scripts/bench/speculative-in-process.ts --help`).
// The speculative part of `make bench` compares two servers; on a shared machine two processes drift apart
// by more than the 5% the goal allows. Here one engine, loaded with n-gram lookup, serves loads that
// alternate between speculating and not (`draftTokens: 0`, what Ollama's `draft_num_predict: 0` sets):
// the same process, memory and threads, so a pair's ratio holds only what speculation changes. It prints
// each pair, the median ratio, and the engine's own tokens per ms of drafting steps over plain steps.
import { parseArgs } from "node:util";
import { Engine } from "../../src/engine/engine.ts";
import { wholeNumberOption } from "../../src/usage-error.ts";
import { ensureModel } from "../gen-models.ts";
import { COPY_PROMPT, copyConstraint, copyGrammar, PASSAGE, STORY } from "./speculative.ts";
import { summarize } from "./stats.ts";

const USAGE = `Usage: bun scripts/bench/speculative-in-process.ts [options]
  --model PATH      target model (default: the generated LFM2-350M shape, Q4_0)
  --streams N       concurrent requests per load (default 4)
  --case NAME       copy (the output copies its prompt: grammar and logit bias, as in the server part's
                    ngram-copy) or story (an ordinary prompt: little to look up) (default copy)
  --tokens N        greedy tokens per request (default 128)
  --pairs N         pairs of loads, alternating which goes first (default 8)
  --threads N       decode threads (default 2)
  --draft-tokens N  most draft tokens per step (default 4)`;

export interface InProcessOptions {
  model: string;
  streams: number;
  kind: "copy" | "story";
  tokens: number;
  pairs: number;
  threads: number;
  draftTokens: number;
}

/** One load: `streams` requests at once, speculating or not; returns tokens per second. */
async function load(engine: Engine, o: InProcessOptions, speculate: boolean, sampling: Record<string, unknown>): Promise<number> {
  const started = performance.now();
  await Promise.all(Array.from({ length: o.streams }, (_, stream) => new Promise<void>((resolve, reject) => engine.submit({
    id: `load-${Math.random()}`, prompt: o.kind === "copy" ? COPY_PROMPT : `${STORY} (${stream + 1})`,
    maxTokens: o.tokens, ignoreEos: true, sampling, ...(speculate ? {} : { draftTokens: 0 }),
  }, (event) => {
    if (event.type === "done") resolve();
    else if (event.type === "error") reject(new Error(event.message));
  }))));
  return (o.tokens * o.streams) / ((performance.now() - started) / 1000);
}

export async function runInProcess(o: InProcessOptions, log: (line: string) => void = console.log): Promise<void> {
  const engine = Engine.load({
    modelPath: o.model, parallel: o.streams, contextPerSequence: 1024, threads: o.threads,
    speculative: { method: "ngram", maxDraftTokens: o.draftTokens, ngramMax: 3, ngramMin: 1 },
  });
  try {
    let sampling: Record<string, unknown> = { temperature: 0 };
    if (o.kind === "copy") {
      const { banned, copies } = copyConstraint(new Set(engine.tokenize(PASSAGE, false, false)), engine.info.vocabularySize, o.tokens);
      sampling = { temperature: 0, grammar: copyGrammar(copies), logitBias: banned.map((t): [number, number] => [t, -100]) };
    }
    // warm-up: both ways once, short
    await load(engine, { ...o, tokens: 8 }, false, sampling);
    await load(engine, { ...o, tokens: 8 }, true, sampling);
    const ratios: number[] = [];
    for (let pair = 0; pair < o.pairs; pair++) {
      const before = engine.stats();
      const order = pair % 2 === 0 ? [false, true] : [true, false];
      const rates = new Map<boolean, number>();
      for (const speculate of order) rates.set(speculate, await load(engine, o, speculate, sampling));
      const after = engine.stats();
      const ratio = rates.get(true)! / rates.get(false)!;
      ratios.push(ratio);
      log(`pair ${pair + 1} (${order[0] ? "speculating" : "plain"} first): plain ${rates.get(false)!.toFixed(1)} t/s, speculating ${rates.get(true)!.toFixed(1)} t/s, ×${ratio.toFixed(3)}, accepted ${after.acceptedDraftTokens - before.acceptedDraftTokens} of ${after.draftTokens - before.draftTokens} drafted`);
    }
    const summary = summarize(ratios)!;
    const yieldRatio = engine.stats().draftStepYield?.[o.streams];
    log(`${o.kind}, ${o.streams} streams: speculating ÷ plain, median of ${summary.runs} pairs ${summary.median.toFixed(3)} (${summary.min.toFixed(2)}–${summary.max.toFixed(2)}); `
      + `drafting steps' tokens per ms ÷ plain steps' ${yieldRatio === undefined ? "– (no drafting step)" : yieldRatio.toFixed(2)}`);
  } finally {
    engine.dispose();
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      model: { type: "string" }, streams: { type: "string" }, case: { type: "string" }, tokens: { type: "string" },
      pairs: { type: "string" }, threads: { type: "string" }, "draft-tokens": { type: "string" }, help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const kind = values.case ?? "copy";
  if (kind !== "copy" && kind !== "story") {
    console.error(`--case must be copy or story, not "${kind}"\n${USAGE}`);
    process.exit(2);
  }
  try {
    const options: InProcessOptions = {
      model: values.model ?? await ensureModel("lfm2-350m-q4_0"),
      kind,
      streams: wholeNumberOption(values.streams, "streams", 1, 64) ?? 4,
      tokens: wholeNumberOption(values.tokens, "tokens", 1, 4096) ?? 128,
      pairs: wholeNumberOption(values.pairs, "pairs", 1, 100) ?? 8,
      threads: wholeNumberOption(values.threads, "threads", 1, 256) ?? 2,
      draftTokens: wholeNumberOption(values["draft-tokens"], "draft-tokens", 1, 32) ?? 4,
    };
    await runInProcess(options);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(2);
  }
}
