// Measures llamux's engine the way llama-bench and llama-batched-bench measure llama.cpp, through the
// same child-process path the server uses. Prints one JSON line on stdout.
//
//   bun scripts/bench-engine.ts --model PATH --mode tg --tokens 128          single-stream decode t/s
//   bun scripts/bench-engine.ts --model PATH --mode pp --prompt 512          prompt processing t/s
//   bun scripts/bench-engine.ts --model PATH --mode batch --parallel 8 --prompt 128 --tokens 128
//                                                                            aggregate decode t/s
//   --sampling greedy|top-k|full|top-p   the sampler chain (default greedy): top-k is llama.cpp's default
//   chain cut at 40 tokens, full is vLLM's default (top_k off, top_p 1: a draw over the whole vocabulary),
//   top-p is full with top_p 0.95 and min_p 0.05 (no top-k)
import { parseArgs } from "node:util";
import { ModelManager } from "../src/engine/model-manager.ts";
import type { EngineProcess } from "../src/engine/engine-process.ts";
import type { SamplerSettings } from "../ffi/sampler.ts";

const help = `Usage: bun scripts/bench-engine.ts --model PATH --mode tg|pp|batch [options]
  --tokens N       tokens to generate per sequence (default 128)
  --prompt N       prompt tokens per sequence (default 512 for pp, 128 for batch, 1 for tg)
  --parallel N     concurrent sequences for --mode batch (default 1)
  --threads N      threads (default 2)
  --flash-attn M   auto|on|off (default auto)
  --sampling S     greedy|top-k|full|top-p (default greedy)`;

const { values } = parseArgs({
  options: {
    model: { type: "string" }, mode: { type: "string" }, tokens: { type: "string" }, prompt: { type: "string" },
    parallel: { type: "string" }, threads: { type: "string" }, "flash-attn": { type: "string" }, sampling: { type: "string" }, help: { type: "boolean", short: "h" },
  },
});
/** Sampler settings by name; every chain draws with a fixed seed so that runs see the same tokens. */
const SAMPLING: Record<string, Partial<SamplerSettings>> = {
  greedy: { temperature: 0 },
  "top-k": { temperature: 1, topK: 40, topP: 1, minP: 0, seed: 42 },
  full: { temperature: 1, topK: 0, topP: 1, minP: 0, seed: 42 },
  "top-p": { temperature: 1, topK: 0, topP: 0.95, minP: 0.05, seed: 42 },
};
if (values.help || !values.model || !["tg", "pp", "batch"].includes(values.mode ?? "") || !((values.sampling ?? "greedy") in SAMPLING)) {
  console.error(help);
  process.exit(values.help ? 0 : 2);
}
const mode = values.mode as "tg" | "pp" | "batch";
const generate = Number(values.tokens ?? 128);
const promptLength = Number(values.prompt ?? (mode === "pp" ? 512 : mode === "batch" ? 128 : 1));
const parallel = mode === "batch" ? Number(values.parallel ?? 1) : 1;
const threads = Number(values.threads ?? 2);
const flashAttention = (values["flash-attn"] ?? "auto") as "auto" | "on" | "off";
const sampling = SAMPLING[values.sampling ?? "greedy"]!;

/** Random token ids from a fixed seed: every run and every tool sees the same kind of input. */
function randomPrompt(length: number, vocabSize: number, seed: number): number[] {
  let state = seed >>> 0 || 1;
  return Array.from({ length }, () => {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return 1000 + (state % (vocabSize - 2000));
  });
}

interface Timeline { tokenTimes: number[]; firstTokenAt: number; promptMs: number }

async function runSequence(engine: EngineProcess, prompt: number[], maxTokens: number): Promise<Timeline> {
  const timeline: Timeline = { tokenTimes: [], firstTokenAt: 0, promptMs: 0 };
  for await (const event of engine.generate({ prompt, maxTokens, ignoreEos: true, sampling })) {
    if (event.type === "token" && event.token >= 0) timeline.tokenTimes.push(performance.now());
    else if (event.type === "error") throw new Error(event.message);
    else if (event.type === "done") timeline.promptMs = event.usage.promptMs;
  }
  timeline.firstTokenAt = timeline.tokenTimes[0] ?? 0;
  return timeline;
}

const manager = new ModelManager();
try {
  // Context sized as the llama.cpp tools size theirs, since attention cost follows it: llama-bench uses
  // prompt + generated tokens, llama-batched-bench -c 4096 split over the sequences (-no-kvu).
  const contextPerSequence = mode === "batch" ? Math.floor(4096 / parallel) : mode === "pp" ? promptLength + 1 : promptLength + generate;
  const engine = await manager.engine({ modelPath: values.model, parallel, contextPerSequence, threads, flashAttention, batchSize: 512 });
  const vocabSize = engine.info.vocabularySize;
  // Warm-up: first decode allocates buffers and pages in weights.
  await runSequence(engine, randomPrompt(16, vocabSize, 99), 4);

  let tokensPerSecond: number;
  if (mode === "pp") {
    const t = await runSequence(engine, randomPrompt(promptLength, vocabSize, 1), 1);
    tokensPerSecond = promptLength / (t.promptMs / 1000);
  } else if (mode === "tg") {
    const t = await runSequence(engine, randomPrompt(promptLength, vocabSize, 1), generate);
    // Tokens after the first each cost one decode step (the first comes from the prompt's step).
    const times = t.tokenTimes;
    tokensPerSecond = (times.length - 1) / ((times.at(-1)! - times[0]!) / 1000);
  } else {
    const timelines = await Promise.all(
      Array.from({ length: parallel }, (_, i) => runSequence(engine, randomPrompt(promptLength, vocabSize, i + 1), generate)));
    // Aggregate decode rate once every sequence is generating, as llama-batched-bench's S_TG.
    const start = Math.max(...timelines.map((t) => t.firstTokenAt));
    const end = Math.max(...timelines.map((t) => t.tokenTimes.at(-1)!));
    const tokens = timelines.reduce((sum, t) => sum + t.tokenTimes.filter((time) => time > start).length, 0);
    tokensPerSecond = tokens / ((end - start) / 1000);
  }
  console.log(JSON.stringify({ mode, sampling: values.sampling ?? "greedy", parallel, prompt: promptLength, tokens: generate, threads, tokensPerSecond: Number(tokensPerSecond.toFixed(2)) }));
} finally {
  await manager.stopAll();
}
