// What a grammar costs a sampled token, per vocabulary: llama.cpp's way (the grammar checks every token,
// then the chain draws: `grammarFirst`, the reference the sampler tests compare with) against llamux's
// (the chain's pick is checked first; on rejection the grammar rules tokens out by prefix groups,
// ffi/shim.c). Each grammar is walked from its start along the tokens drawn, over fixed random logits, so
// both pay for the same states. Logits from random weights make nearly every pick a rejection, as a
// forced call's fixed text does on a real model.
//
//   bun scripts/bench/grammar-check.ts [--models a,b] [--tokens N]
import { parseArgs } from "node:util";
import { LlamaModel } from "../../ffi/llama.ts";
import { SamplerChain, defaultSamplerSettings, type SamplerSettings } from "../../ffi/sampler.ts";
import { MODEL_NAMES, ensureModel, isModelName } from "../gen-models.ts";

const HELP = `Usage: bun scripts/bench/grammar-check.ts [options]

Times one grammar-constrained token draw, llama.cpp's way (the grammar checks every token first) and
llamux's (the pick first, then prefix groups), on each model's vocabulary. Prints a Markdown table.

Options:
  --models LIST   generated models whose vocabularies are used (default tiny-llama,lfm2-350m,llama-1b)
  --tokens N      tokens drawn along each grammar (default 24)
  -h, --help      this text
`;

/** Grammars a client's requests produce most: a forced call's fixed text, JSON between values, a string's content. */
const GRAMMARS: Array<[string, string]> = [
  ["fixed text (a forced call's name)", 'root ::= "{\\"name\\": \\"record_person\\", \\"arguments\\": {\\"name\\": \\"" [a-z]+ "\\"}}"'],
  ["JSON whitespace, then a value", 'root ::= ([ \\t\\n] | "{" | "[" | "\\"" | [0-9])+'],
  ["inside a string", 'root ::= [^"\\\\]+ "\\""'],
];
const CHAINS: Array<[string, Partial<SamplerSettings>]> = [["whole vocabulary", { topK: 0, topP: 1, minP: 0 }], ["top-k 40", { topK: 40, topP: 0.95, minP: 0.05 }]];

function randomLogits(length: number, seed: number): Float32Array {
  let state = seed >>> 0 || 1;
  return Float32Array.from({ length }, () => {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return (state / 0xffffffff - 0.5) * 8;
  });
}

/** Mean milliseconds a draw, walking the grammar for `tokens` tokens (fewer when it ends). */
function timeDraws(model: LlamaModel, settings: SamplerSettings, grammarFirst: boolean, tokens: number): number {
  const chain = SamplerChain.create(model.vocab, model.trainedContextLength, settings, { grammarFirst });
  try {
    let spent = 0;
    let drawn = 0;
    for (let i = 0; i < tokens; i++) {
      const logits = randomLogits(model.vocab.size, 1000 + i);
      const started = performance.now();
      const token = chain.sampleFrom(logits);
      spent += performance.now() - started;
      drawn++;
      if (token < 0 || model.vocab.isEndOfGeneration(token)) break;
    }
    return spent / drawn;
  } finally {
    chain.dispose();
  }
}

const { values } = parseArgs({ options: { models: { type: "string" }, tokens: { type: "string" }, help: { type: "boolean", short: "h" } } });
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
const tokens = Number(values.tokens ?? 24);
if (!(Number.isInteger(tokens) && tokens >= 1)) {
  process.stderr.write("grammar-check: --tokens must be a positive integer\n");
  process.exit(2);
}
const lines = ["| vocabulary | grammar | chain | llama.cpp's check (ms a token) | llamux (ms a token) | ratio |", "|---|---|---|---:|---:|---:|"];
for (const name of (values.models ?? "tiny-llama,lfm2-350m,llama-1b").split(",")) {
  if (!isModelName(name)) {
    process.stderr.write(`grammar-check: no generated model "${name}" (known: ${MODEL_NAMES.join(", ")})\n`);
    process.exit(2);
  }
  const model = LlamaModel.load(await ensureModel(name), { vocabOnly: true });
  model.vocab.prefixGroups(); // built once per model, outside the timing
  for (const [label, grammar] of GRAMMARS) {
    for (const [chainName, chain] of CHAINS) {
      const settings = { ...defaultSamplerSettings, temperature: 1, seed: 7, ...chain, grammar };
      const reference = timeDraws(model, settings, true, tokens);
      const grouped = timeDraws(model, settings, false, tokens);
      lines.push(`| ${name} (${model.vocab.size}) | ${label} | ${chainName} | ${reference.toFixed(2)} | ${grouped.toFixed(2)} | ${(reference / grouped).toFixed(1)}× |`);
    }
  }
  model.dispose();
}
process.stdout.write(`${lines.join("\n")}\n`);
