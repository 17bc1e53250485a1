// The SDK's batch API against the same prompts one call at a time: `llm.chat` with N prompts in one
// call (scheduled together) versus N awaited calls of one prompt. Prints one JSON line on stdout.
//
//   bun scripts/bench-sdk.ts --model PATH [--prompts 16] [--tokens 32] [--threads 2]
import { parseArgs } from "node:util";
import { LLM, SamplingParams } from "../src/sdk/index.ts";

const help = `Usage: bun scripts/bench-sdk.ts --model PATH [options]
  --prompts N    prompts per batch (default 16)
  --tokens N     tokens generated per prompt (default 32)
  --parallel N   sequences decoded together (default: the number of prompts, at most 16)
  --threads N    threads (default 2)`;

const { values } = parseArgs({
  options: {
    model: { type: "string" }, prompts: { type: "string" }, tokens: { type: "string" }, parallel: { type: "string" },
    threads: { type: "string" }, help: { type: "boolean", short: "h" },
  },
});
if (values.help || !values.model) {
  console.error(help);
  process.exit(values.help ? 0 : 2);
}
const count = Number(values.prompts ?? 16);
const tokens = Number(values.tokens ?? 32);
const parallel = Number(values.parallel ?? Math.min(count, 16));
const threads = Number(values.threads ?? 2);

await using llm = new LLM({ model: values.model, max_model_len: 256, max_num_seqs: parallel, threads });
const prompts = Array.from({ length: count }, (_, i) => `Write item ${i + 1} of a shopping list.`);
// Every prompt generates exactly `tokens` tokens, so both sides do the same work.
const params = new SamplingParams({ temperature: 0, max_tokens: tokens, ignore_eos: true });
await llm.chat(prompts.slice(0, 2), params, { progress: false }); // load and warm up

let started = performance.now();
const batch = await llm.chat(prompts, params, { progress: false });
const batchSeconds = (performance.now() - started) / 1000;

started = performance.now();
for (const prompt of prompts) await llm.chat(prompt, params, { progress: false });
const sequentialSeconds = (performance.now() - started) / 1000;

const generated = batch.reduce((sum, r) => sum + r.outputs[0]!.token_ids.length, 0);
console.log(JSON.stringify({
  prompts: count, tokensPerPrompt: tokens, parallel, batchSeconds, sequentialSeconds,
  speedup: sequentialSeconds / batchSeconds, batchTokensPerSecond: generated / batchSeconds,
}));
