// Batch generation with the in-process SDK, vLLM style: all prompts run together, results in order.
//   bun examples/batch.ts path/to/model.gguf      (or set LLAMUX_MODEL; a store name or <org>/<model> works too)
import { LLM, SamplingParams } from "llamux";

const model = process.argv[2] ?? process.env.LLAMUX_MODEL;
if (!model) {
  console.error("usage: bun examples/batch.ts MODEL   (a GGUF path, a store name or <org>/<model>; or set LLAMUX_MODEL)");
  process.exit(2);
}

await using llm = new LLM({ model, max_model_len: 1024 });
const prompts = ["Name a colour.", "Name a fruit.", "Name a planet."];
const results = await llm.chat(prompts, new SamplingParams({ temperature: 0.7, max_tokens: 16, seed: 42 }));
for (const [i, result] of results.entries()) {
  const [output] = result.outputs;
  console.log(`${prompts[i]} -> ${JSON.stringify(output!.text)} (${output!.token_ids.length} tokens, ${output!.finish_reason})`);
}
