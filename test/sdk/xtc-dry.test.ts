// The XTC and DRY samplers end to end through both in-process SDKs, imported by the package's name:
// vLLM's `LLM` with `SamplingParams({ xtc_probability, dry_multiplier, … })` (LLM.chat and LLM.generate),
// and the conversation SDK's `GenerationOptions` ({ xtcProbability, dryMultiplier, … }). Each must change
// the reply (test/clients/sampler-fixture.ts says how), and a bad value must be an error naming the field.
// One LLM and one ModelRunner (each one engine) for the file.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Chunk, Complete, GenerationError, GenerationOptions, LLM, ModelRunner, SamplingParams, type MessageResponse, type SamplingParamsInit } from "llamux";
import { ensureModel } from "../../scripts/gen-models.ts";
import { BAD_VALUES, REPLY_TOKENS, type Settings, expectDryTakesEffect, expectXtcTakesEffect } from "../clients/sampler-fixture.ts";

let llm: LLM;
let runner: ModelRunner;

beforeAll(async () => {
  const model = await ensureModel("tiny-llama");
  llm = new LLM({ model, max_model_len: 512, max_num_seqs: 2 });
  runner = await ModelRunner.load(model, { contextSize: 512, parallel: 1 });
}, 120_000);

afterAll(async () => {
  await llm?.dispose();
  await runner?.unload();
});

const prompt = "Tell me a story";

/** SamplingParams of these settings: vLLM calls repeat_penalty repetition_penalty. */
function samplingParams(settings: Settings): SamplingParams {
  const { repeat_penalty, ...rest } = settings as Record<string, unknown>;
  return new SamplingParams({ max_tokens: REPLY_TOKENS, ...(repeat_penalty !== undefined ? { repetition_penalty: repeat_penalty } : {}), ...rest } as SamplingParamsInit);
}

/** GenerationOptions of these settings: the SDK's camelCase names. */
const SDK_NAMES: Record<string, string> = {
  temperature: "temperature", seed: "seed", repeat_penalty: "repetitionPenalty", xtc_probability: "xtcProbability", xtc_threshold: "xtcThreshold",
  dry_multiplier: "dryMultiplier", dry_base: "dryBase", dry_allowed_length: "dryAllowedLength", dry_penalty_last_n: "dryPenaltyLastN",
  dry_sequence_breakers: "drySequenceBreakers",
};
function generationOptions(settings: Settings): GenerationOptions {
  const named = Object.fromEntries(Object.entries(settings).map(([name, value]) => [SDK_NAMES[name]!, value]));
  return new GenerationOptions({ maxTokens: REPLY_TOKENS, functionCallParser: null, ...named });
}

describe("vLLM's LLM with SamplingParams", () => {
  const chatReply = async (settings: Settings) => (await llm.chat([{ role: "user", content: prompt }], samplingParams(settings)))[0]!.outputs[0]!.text;
  const generateReply = async (settings: Settings) => (await llm.generate(prompt, samplingParams(settings)))[0]!.outputs[0]!.text;

  test("chat: xtc_probability and xtc_threshold change a seeded reply, the same way every time", async () => {
    await expectXtcTakesEffect(chatReply);
  });

  test("chat: dry_multiplier, dry_base, dry_allowed_length and dry_penalty_last_n break a greedy loop", async () => {
    await expectDryTakesEffect(chatReply);
  });

  test("generate (a raw prompt): XTC and DRY take effect too", async () => {
    await expectXtcTakesEffect(generateReply);
    await expectDryTakesEffect(generateReply);
  });

  test("a bad value is a RangeError naming the field", () => {
    for (const { field, value } of BAD_VALUES) expect(() => new SamplingParams({ [field]: value })).toThrow(field);
  });
});

describe("the conversation SDK's GenerationOptions", () => {
  /** A fresh conversation per reply, so that every reply answers the same history. */
  async function reply(settings: Settings): Promise<string> {
    const responses: MessageResponse[] = [];
    for await (const response of runner.createConversation().generateResponse(prompt, generationOptions(settings))) responses.push(response);
    if (!(responses.at(-1) instanceof Complete)) throw new Error(`the reply did not complete: ${JSON.stringify(responses.at(-1))}`);
    return responses.filter((r): r is Chunk => r instanceof Chunk).map((chunk) => chunk.text).join("");
  }

  test("xtcProbability and xtcThreshold change a seeded reply, the same way every time", async () => {
    await expectXtcTakesEffect(reply);
  });

  test("dryMultiplier, dryBase, dryAllowedLength and dryPenaltyLastN break a greedy loop", async () => {
    await expectDryTakesEffect(reply);
  });

  test("a bad value is a RangeError naming the option, given to generateResponse it ends the stream with an Error", async () => {
    const sdkValues = [{ xtcProbability: 2 }, { dryBase: 0.5 }, { drySequenceBreakers: [] as string[] }];
    for (const bad of sdkValues) {
      const name = Object.keys(bad)[0]!;
      expect(() => new GenerationOptions(bad)).toThrow(name);
      const responses: MessageResponse[] = [];
      for await (const response of runner.createConversation().generateResponse(prompt, bad)) responses.push(response);
      expect(responses).toHaveLength(1);
      expect(responses[0]).toBeInstanceOf(GenerationError);
      expect((responses[0] as GenerationError).message).toContain(name);
    }
  });
});
