// Measures what prefix reuse saves on a model, and what a saved-state checkpoint would cost, to back
// the engine's choice for recurrent/hybrid models (see src/engine/prefix-reuse.ts). Prints JSON.
//
//   bun scripts/bench-prefix-reuse.ts --model PATH [--prompt 1024] [--threads 2]
import { parseArgs } from "node:util";
import { Engine } from "../src/engine/engine.ts";
import { LlamaContext, LlamaModel, TokenBatch } from "../ffi/llama.ts";

const { values } = parseArgs({ options: { model: { type: "string" }, prompt: { type: "string" }, threads: { type: "string" } } });
if (!values.model) {
  console.error("Usage: bun scripts/bench-prefix-reuse.ts --model PATH [--prompt 1024] [--threads 2]");
  process.exit(2);
}
const promptLength = Number(values.prompt ?? 1024);
const threads = Number(values.threads ?? 2);

function tokens(length: number, seed: number): number[] {
  return Array.from({ length }, (_, i) => 1000 + ((i * 7919 + seed * 104729) % 20000));
}

function promptMs(engine: Engine, prompt: number[]): Promise<{ ms: number; cached: number }> {
  return new Promise((resolve, reject) => {
    engine.submit({ id: crypto.randomUUID(), prompt, maxTokens: 1, sampling: { temperature: 0 } }, (event) => {
      if (event.type === "done") resolve({ ms: event.usage.promptMs, cached: event.usage.cachedPromptTokens });
      else if (event.type === "error") reject(new Error(event.message));
    });
  });
}

const engine = Engine.load({ modelPath: values.model, parallel: 1, contextPerSequence: promptLength + 512, threads });
const history = tokens(promptLength, 1);
await promptMs(engine, tokens(32, 9)); // warm-up
const full = await promptMs(engine, history);
// The engine decoded history + its one generated token's predecessor; a next turn appends to it.
const continuation = await promptMs(engine, history.concat(tokens(64, 2)));
const diverging = await promptMs(engine, history.slice(0, -8).concat(tokens(64, 3)));
const recurrent = engine.info.recurrentOrHybrid;
engine.dispose();

// Cost of a checkpoint: saving and restoring one sequence's state after the same prompt.
const model = LlamaModel.load(values.model);
const context = LlamaContext.create(model, { contextSize: promptLength + 512, batchSize: 512, threads });
const batch = new TokenBatch(512);
for (let start = 0; start < history.length; start += 512) {
  batch.clear();
  history.slice(start, start + 512).forEach((t, i) => batch.add(t, start + i, 0, false));
  context.decode(batch);
}
let t = performance.now();
const state = context.saveSequence(0);
const saveMs = performance.now() - t;
t = performance.now();
context.restoreSequence(0, state);
const restoreMs = performance.now() - t;
context.dispose();
model.dispose();

console.log(JSON.stringify({
  model: values.model,
  recurrentOrHybrid: recurrent,
  promptTokens: promptLength,
  fullPromptMs: Math.round(full.ms),
  continuation: { newTokens: 64, cachedTokens: continuation.cached, ms: Math.round(continuation.ms) },
  divergingInsideCache: { cachedTokens: diverging.cached, ms: Math.round(diverging.ms) },
  checkpoint: { bytes: state.length, saveMs: Number(saveMs.toFixed(1)), restoreMs: Number(restoreMs.toFixed(1)) },
}));
