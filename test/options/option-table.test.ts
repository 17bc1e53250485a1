// The option table as every surface reads it: one parameter (XTC, DRY) set through each API's own
// spelling reaches the same engine setting, and a bad value is an error naming the field as that API
// spelled it. Pure: no model, no process.
import { describe, expect, test } from "bun:test";
import { OPTIONS } from "../../src/options/table.ts";
import { engineSettings } from "../../src/options/engine-settings.ts";
import { checkOllamaOption, readOllamaOptions } from "../../src/options/ollama-names.ts";
import { readWireOptions, toWireNames } from "../../src/options/wire-names.ts";
import { readLmStudioKeys, readLmStudioRest, toLmStudioFields } from "../../src/options/lmstudio-names.ts";
import { readSdkOptions } from "../../src/options/sdk-names.ts";
import { mergeOptionValues, ollamaDefaults } from "../../src/options/values.ts";
import { parseModelfile } from "../../src/store/modelfile/index.ts";
import { modelDefinition } from "../../src/store/modelfile/definition.ts";
import { chatCompletionSchema } from "../../src/server/openai/schemas.ts";
import { responsesSchema } from "../../src/server/openai/responses-schema.ts";
import { messagesSchema } from "../../src/server/anthropic/schema.ts";
import { validate } from "../../src/server/validation.ts";
import { ApiError } from "../../src/server/api-error.ts";
import { SamplingParams } from "../../src/sdk/sampling-params.ts";
import { GenerationOptions } from "../../src/sdk/generation-options.ts";

const XTC_DRY = { xtcProbability: 0.5, xtcThreshold: 0.2, dryMultiplier: 0.8, dryBase: 2, dryAllowedLength: 3, dryLastN: 128, drySequenceBreakers: ["\n", "."] };
const WIRE = { xtc_probability: 0.5, xtc_threshold: 0.2, dry_multiplier: 0.8, dry_base: 2, dry_allowed_length: 3, dry_penalty_last_n: 128, dry_sequence_breakers: ["\n", "."] };

const samplingOf = (values: Parameters<typeof engineSettings>[0]) => engineSettings(values).sampling;

describe("the option table", () => {
  test("each name belongs to one parameter on each surface", () => {
    for (const field of ["ollama", "lmstudioRest", "sdk"] as const) {
      const names = Object.values(OPTIONS).flatMap((row) => (field in row ? [(row as Record<string, unknown>)[field] as string] : []));
      expect(new Set(names).size).toBe(names.length);
    }
    const wire = Object.values(OPTIONS).flatMap((row) => ("wire" in row ? [...row.wire] : []));
    expect(new Set(wire).size).toBe(wire.length);
  });

  test("Ollama's defaults leave load options to the server", () => {
    const defaults = ollamaDefaults();
    expect(defaults).toMatchObject({ temperature: 0.8, topK: 40, topP: 0.9, seed: -1 });
    expect(defaults.contextLength).toBeUndefined();
    expect(defaults.batchSize).toBeUndefined();
  });

  test("later layers win key by key; unset keys keep the earlier value", () => {
    expect(mergeOptionValues({ temperature: 1, topK: 40 }, { topK: 5 }, { temperature: undefined })).toEqual({ temperature: 1, topK: 5 });
  });
});

describe("XTC and DRY reach the same engine settings from every surface", () => {
  test("Ollama options and Modelfile PARAMETER", () => {
    expect(samplingOf(readOllamaOptions(WIRE))).toMatchObject(XTC_DRY);
    const modelfile = parseModelfile([
      "FROM m", "PARAMETER xtc_probability 0.5", "PARAMETER xtc_threshold 0.2", "PARAMETER dry_multiplier 0.8", "PARAMETER dry_base 2",
      "PARAMETER dry_allowed_length 3", "PARAMETER dry_penalty_last_n 128", 'PARAMETER dry_sequence_breakers "\n"', "PARAMETER dry_sequence_breakers .",
    ].join("\n"));
    expect(samplingOf(readOllamaOptions(modelDefinition(modelfile).parameters))).toMatchObject(XTC_DRY);
  });

  test("/v1 bodies, the Responses API and the Messages API", () => {
    const chat = validate(chatCompletionSchema, { model: "m", messages: [{ role: "user", content: "hi" }], ...WIRE });
    expect(samplingOf(readWireOptions(chat))).toMatchObject(XTC_DRY);
    const responses = validate(responsesSchema, { model: "m", input: "hi", ...WIRE });
    expect(samplingOf(readWireOptions(responses))).toMatchObject(XTC_DRY);
    const messages = validate(messagesSchema, { model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }], ...WIRE });
    expect(samplingOf(readWireOptions(messages))).toMatchObject(XTC_DRY);
  });

  test("LM Studio's SDK config keys (XTC, which LM Studio has) and REST fields", () => {
    const keys = new Map<string, unknown>([
      ["llm.prediction.llama.xtcProbability", { checked: true, value: 0.5 }],
      ["llm.prediction.llama.xtcThreshold", { checked: true, value: 0.2 }],
      ["llm.prediction.topPSampling", { checked: false, value: 0.5 }],
    ]);
    const values = readLmStudioKeys(keys);
    expect(samplingOf(values)).toMatchObject({ xtcProbability: 0.5, xtcThreshold: 0.2 });
    expect(values.topP).toBeUndefined();
    expect(toLmStudioFields(values)).toContainEqual({ key: "llm.prediction.llama.xtcProbability", value: { checked: true, value: 0.5 } });
    expect(readLmStudioRest({ temperature: 0.3, top_k: 5, max_output_tokens: 9 })).toEqual({ temperature: 0.3, topK: 5, maxTokens: 9 });
  });

  test("vLLM's SamplingParams and the conversation SDK (local and remote)", () => {
    expect(new SamplingParams(WIRE).toRequest().sampling).toMatchObject(XTC_DRY);
    const sdk = { xtcProbability: 0.5, xtcThreshold: 0.2, dryMultiplier: 0.8, dryBase: 2, dryAllowedLength: 3, dryPenaltyLastN: 128, drySequenceBreakers: ["\n", "."] };
    const options = new GenerationOptions(sdk);
    expect(samplingOf(options.optionValues())).toMatchObject(XTC_DRY);
    // RemoteModelRunner sends them under their wire names.
    expect(toWireNames(options.optionValues())).toMatchObject(WIRE);
  });
});

describe("a bad value is an error naming the field as its surface spells it", () => {
  test("Ollama: the option's name and its range", () => {
    expect(() => checkOllamaOption("xtc_probability", 2)).toThrow('option "xtc_probability" must be in [0, 1], got 2');
    expect(() => checkOllamaOption("dry_base", "x")).toThrow('option "dry_base" must be of type float');
    // Ollama's own options keep Ollama's type-only check.
    expect(checkOllamaOption("temperature", -1)).toBe(-1);
    expect(() => parseModelfile("FROM m\nPARAMETER dry_allowed_length -2")).toThrow(/dry_allowed_length/);
  });

  test("OpenAI-style bodies: a 400 whose param is the field", () => {
    for (const bad of [{ xtc_probability: 1.5 }, { dry_base: 0.5 }, { dry_sequence_breakers: [] }, { dry_allowed_length: 1.5 }]) {
      const field = Object.keys(bad)[0]!;
      try {
        validate(chatCompletionSchema, { model: "m", messages: [{ role: "user", content: "hi" }], ...bad });
        throw new Error(`accepted ${field}`);
      } catch (error) {
        expect(error).toBeInstanceOf(ApiError);
        expect((error as ApiError).status).toBe(400);
        expect((error as ApiError).param).toStartWith(field);
      }
    }
  });

  test("LM Studio keys, SamplingParams and GenerationOptions", () => {
    expect(() => readLmStudioKeys(new Map([["llm.prediction.llama.xtcThreshold", { checked: true, value: 7 }]]))).toThrow("llm.prediction.llama.xtcThreshold");
    expect(() => new SamplingParams({ dry_multiplier: -1 })).toThrow("dry_multiplier must be a number at least 0, got -1.");
    expect(() => new GenerationOptions({ xtcProbability: 3 })).toThrow("Cannot use xtcProbability 3: it must be a number in [0, 1]");
    expect(() => readSdkOptions({ drySequenceBreakers: ["a".repeat(41)] })).toThrow("drySequenceBreakers");
  });
});
