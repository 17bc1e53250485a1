// What a persistent threadpool saves a decoded token: single-token decodes, one sequence, on a context
// whose worker threads stay between decodes (llamux's, as llama.cpp's tools attach one) and on one where
// ggml starts and joins them in every graph (what a context without a pool gets). The two contexts take
// turns, round by round, so drift on a shared machine moves both; the ratio is taken round by round.
//
//   bun scripts/bench/threadpool.ts [--model NAME] [--threads N] [--rounds N] [--decodes N]
import { parseArgs } from "node:util";
import { LlamaContext, LlamaModel, TokenBatch } from "../../ffi/llama.ts";
import { ensureModel, isModelName } from "../gen-models.ts";
import { physicalCoreCount } from "../../ffi/hardware.ts";
import { summarize } from "./stats.ts";

const HELP = `Usage: bun scripts/bench/threadpool.ts [options]

Times single-token decodes on a context with a persistent threadpool and on one without (ggml starts its
worker threads in every graph), taking turns. Prints a Markdown table.

Options:
  --model NAME    generated model (default lfm2-350m-q4_0)
  --threads N     decode threads (default: the physical cores)
  --rounds N      turns each context takes (default 8)
  --decodes N     decodes a turn (default 150)
  -h, --help      this text
`;

const { values } = parseArgs({
  options: { model: { type: "string", default: "lfm2-350m-q4_0" }, threads: { type: "string" }, rounds: { type: "string", default: "8" }, decodes: { type: "string", default: "150" }, help: { type: "boolean", short: "h" } },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const modelName = values.model!;
if (!isModelName(modelName)) throw new Error(`Unknown generated model "${modelName}"`);
const threads = values.threads ? Number(values.threads) : physicalCoreCount();
const rounds = Number(values.rounds);
const decodes = Number(values.decodes);

const model = LlamaModel.load(await ensureModel(modelName));
const contexts = {
  "persistent threadpool": LlamaContext.create(model, { contextSize: decodes + 16, batchSize: 512, threads }),
  "threads started per graph": LlamaContext.create(model, { contextSize: decodes + 16, batchSize: 512, threads, persistentThreads: false }),
};
const batch = new TokenBatch(1);
const times: Record<string, number[]> = {};
for (let round = 0; round < rounds; round++) {
  for (const [name, context] of Object.entries(contexts)) {
    context.clearAll();
    const started = performance.now();
    for (let i = 0; i < decodes; i++) {
      batch.clear();
      batch.add(100 + (i % 50), i, 0, true);
      if (context.decode(batch) !== 0) throw new Error(`decode ${i} failed`);
    }
    (times[name] ??= []).push((performance.now() - started) / decodes);
  }
}
const [pooled, perGraph] = Object.values(times) as [number[], number[]];
console.log(`${modelName}, ${threads} threads, ${rounds} rounds of ${decodes} single-token decodes\n`);
console.log("| context | ms a decode, median | min | max |\n|---|---:|---:|---:|");
for (const [name, samples] of Object.entries(times)) {
  const { median, min, max } = summarize(samples)!;
  console.log(`| ${name} | ${median.toFixed(2)} | ${min.toFixed(2)} | ${max.toFixed(2)} |`);
}
console.log(`\npersistent ÷ per graph, median of the rounds' ratios: ${summarize(pooled.map((t, i) => t / perGraph[i]!))!.median.toFixed(3)}`);
for (const context of Object.values(contexts)) context.dispose();
model.dispose();
