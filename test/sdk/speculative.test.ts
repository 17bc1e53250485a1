// The SDK's speculative decoding: LLM({ speculative_config }) as vLLM's, SamplingParams'
// num_speculative_tokens per request, and the drafted/accepted counts on each output.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LLM, SamplingParams } from "llamux";
import { ensureModel } from "../../scripts/gen-models.ts";

let plain: LLM, selfDraft: LLM;
const prompts = ["Once upon a time", "The quick brown fox jumps over the lazy dog"];

beforeAll(async () => {
  const model = await ensureModel("tiny-lfm2");
  plain = new LLM({ model, max_model_len: 512, max_num_seqs: 2, threads: 1 });
  selfDraft = new LLM({ model, max_model_len: 512, max_num_seqs: 2, threads: 1, speculative_config: { model, num_speculative_tokens: 4 } });
}, 120_000);

afterAll(async () => {
  await Promise.all([plain.dispose(), selfDraft.dispose()]);
});

describe("LLM speculative_config", () => {
  test("greedy output is unchanged and each output reports its drafted and accepted tokens", async () => {
    const params = new SamplingParams({ temperature: 0, max_tokens: 32, ignore_eos: true });
    const expected = await plain.generate(prompts, params, { progress: false });
    const got = await selfDraft.generate(prompts, params, { progress: false });
    for (let i = 0; i < prompts.length; i++) {
      expect(got[i]!.outputs[0]!.token_ids).toEqual(expected[i]!.outputs[0]!.token_ids);
      const spec = got[i]!.outputs[0]!.spec_decode!;
      // the model as its own draft: what it drafts is what greedy decoding picks
      expect(spec.draft_tokens).toBeGreaterThan(0);
      expect(spec.accepted_tokens).toBeGreaterThan(0.8 * spec.draft_tokens);
    }
    expect(expected[0]!.outputs[0]!.spec_decode).toBeUndefined();
  }, 60_000);

  test("num_speculative_tokens 0 turns speculation off for a request", async () => {
    const [result] = await selfDraft.generate(prompts[0]!, new SamplingParams({ temperature: 0, max_tokens: 8, num_speculative_tokens: 0 }), { progress: false });
    expect(result!.outputs[0]!.spec_decode).toEqual({ draft_tokens: 0, accepted_tokens: 0 });
  }, 60_000);

  test("an unknown method is refused", () => {
    expect(() => new LLM({ model: "x.gguf", speculative_config: { method: "eagle" } })).toThrow(/method "eagle" is not supported/);
  });
});
