// What mixing LoRA adapters costs against one adapter alone, inside one engine (run alone:
// `bun scripts/bench/lora-mixing.ts --help`). llama.cpp applies an adapter to the whole context, so a step
// decodes the sequences of one adapter and adapters take turns (src/engine/planning/adapter-turns.ts): with
// the streams split over two adapters each step holds half of them, and each switch costs llama.cpp a graph
// reservation. One engine with both adapters loaded serves loads that alternate between the mixes, so a
// ratio holds only what the mix changes. Indicative only on a shared machine and tiny models.
import { parseArgs } from "node:util";
import { Engine } from "../../src/engine/engine.ts";
import { wholeNumberOption } from "../../src/usage-error.ts";
import { ensureModel } from "../gen-models.ts";
import { summarize } from "./stats.ts";

const USAGE = `Usage: bun scripts/bench/lora-mixing.ts [options]
  --model PATH     base model (default: the generated tiny-llama)
  --lora-a PATH    first adapter (default: the generated tiny-llama-lora)
  --lora-b PATH    second adapter (default: the generated tiny-llama-lora-b)
  --streams N      concurrent requests per load (default 4)
  --tokens N       greedy tokens per request (default 64)
  --rounds N       rounds of the three loads, each round in another order (default 3)
  --threads N      decode threads (default 1)`;

/**
 * How a load's streams are spread: all on adapter a; half a and half b; half a and half the base model;
 * and half the streams alone on a, which is what each step of a two-way mix decodes: the gap between it
 * and "two adapters" is what the switches themselves cost.
 */
const MIXES = {
  "one adapter": { share: 1, adapter: () => "a" },
  "two adapters": { share: 1, adapter: (stream: number) => (stream % 2 === 0 ? "a" : "b") },
  "adapter and base": { share: 1, adapter: (stream: number) => (stream % 2 === 0 ? "a" : undefined) },
  "one adapter, half the streams": { share: 0.5, adapter: () => "a" },
} satisfies Record<string, { share: number; adapter: (stream: number) => string | undefined }>;
type Mix = keyof typeof MIXES;

const PROMPT = "<|im_start|>user\nTell me a long story about a lighthouse keeper and the sea.<|im_end|>\n<|im_start|>assistant\n";

/** One load: the mix's share of `streams` greedy requests at once, spread as it says; returns tokens per second. */
async function load(engine: Engine, mix: Mix, streams: number, tokens: number): Promise<number> {
  const started = performance.now();
  const count = Math.max(1, Math.round(streams * MIXES[mix].share));
  await Promise.all(Array.from({ length: count }, (_, stream) => new Promise<void>((resolve, reject) => {
    const adapter = MIXES[mix].adapter(stream);
    engine.submit({
      id: `lora-${Math.random()}`, prompt: `${PROMPT}(${stream + 1})`, maxTokens: tokens, ignoreEos: true, sampling: { temperature: 0 },
      ...(adapter ? { adapter } : {}),
    }, (event) => {
      if (event.type === "done") resolve();
      else if (event.type === "error") reject(new Error(event.message));
    });
  })));
  return (tokens * count) / ((performance.now() - started) / 1000);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      model: { type: "string" }, "lora-a": { type: "string" }, "lora-b": { type: "string" }, streams: { type: "string" },
      tokens: { type: "string" }, rounds: { type: "string" }, threads: { type: "string" }, help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const streams = wholeNumberOption(values.streams, "streams", 2, 64) ?? 4;
  const tokens = wholeNumberOption(values.tokens, "tokens", 1) ?? 64;
  const rounds = wholeNumberOption(values.rounds, "rounds", 1) ?? 3;
  const threads = wholeNumberOption(values.threads, "threads", 1) ?? 1;
  const engine = Engine.load({
    modelPath: values.model ?? await ensureModel("tiny-llama"), parallel: streams, contextPerSequence: 1024, threads, cacheRamMiB: 0,
    lora: {
      modules: [
        { name: "a", path: values["lora-a"] ?? await ensureModel("tiny-llama-lora") },
        { name: "b", path: values["lora-b"] ?? await ensureModel("tiny-llama-lora-b") },
      ],
      maxLoras: 2, maxRank: 1024,
    },
  });
  try {
    const mixes = Object.keys(MIXES) as Mix[];
    for (const mix of mixes) await load(engine, mix, streams, 8); // warm-up
    const rates = new Map<Mix, number[]>(mixes.map((mix) => [mix, []]));
    for (let round = 0; round < rounds; round++) {
      const order = mixes.map((_, i) => mixes[(i + round) % mixes.length]!);
      const line: string[] = [];
      for (const mix of order) {
        const rate = await load(engine, mix, streams, tokens);
        rates.get(mix)!.push(rate);
        line.push(`${mix} ${rate.toFixed(1)} t/s`);
      }
      console.log(`round ${round + 1}: ${line.join(", ")}`);
    }
    const one = summarize(rates.get("one adapter")!)!.median;
    for (const mix of mixes) {
      const median = summarize(rates.get(mix)!)!.median;
      console.log(`${mix}: median ${median.toFixed(1)} t/s over ${rounds} rounds, ×${(median / one).toFixed(2)} of one adapter alone`);
    }
    console.log(`${streams} streams, ${tokens} tokens each, ${threads} thread(s); indicative only (shared machine, tiny model)`);
  } finally {
    await engine.dispose();
  }
}

if (import.meta.main) await main();
