// The XTC and DRY samplers end to end on profile c (LM Studio): the `openai` client's chat completions
// with the fields as extra body, and LM Studio's own SDK (`@lmstudio/sdk`), whose prediction config has
// XTC but no DRY. Each must change the reply (sampler-fixture.ts says how),
// and a bad value must be an error naming the field in the API's own shape. One server for the file.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type KVConfig, LMStudioClient, type LLM } from "@lmstudio/sdk";
import OpenAI from "openai";
import { quietLogger } from "../server/lmstudio-sdk-fixture.ts";
import { type ClientServer, MODEL, startClientServer } from "./client-fixture.ts";
import { BAD_VALUES, REPLY_TOKENS, type Settings, expectDryTakesEffect, expectXtcTakesEffect } from "./sampler-fixture.ts";

let server: ClientServer;
let lmstudio: LMStudioClient;

beforeAll(async () => {
  server = await startClientServer("c");
  lmstudio = new LMStudioClient({ baseUrl: server.baseUrl.replace("http://", "ws://"), logger: quietLogger });
}, 180_000);

afterAll(async () => {
  await server?.stop();
});

const prompt = "Tell me a story";

describe("the openai client's chat.completions.create (extra body)", () => {
  const client = () => new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "unused", maxRetries: 0 });
  const reply = async (settings: Settings) =>
    (await client().chat.completions.create({ model: MODEL, messages: [{ role: "user", content: prompt }], max_tokens: REPLY_TOKENS, ...settings })).choices[0]!.message.content!;

  test("XTC changes a seeded reply, the same way every time", async () => {
    await expectXtcTakesEffect(reply);
  });

  test("DRY breaks a greedy loop", async () => {
    await expectDryTakesEffect(reply);
  });

  test("a bad value is a 400 in LM Studio's OpenAI shape whose param is the field", async () => {
    for (const { field, value } of BAD_VALUES) {
      const error = await reply({ [field]: value }).then(() => undefined, (e: unknown) => e);
      if (!(error instanceof OpenAI.APIError)) throw new Error(`expected an APIError for ${field}, got ${String(error)}`);
      expect(error.status).toBe(400);
      expect(error.type).toBe("invalid_request_error");
      expect(error.param).toBe(field);
      expect(error.message).toContain(`"${field}"`);
    }
  });
});

describe("LM Studio's SDK: model.respond with the XTC config keys", () => {
  // @lmstudio/sdk 1.5.0 declares xtcProbability and xtcThreshold in LLMPredictionConfigInput, but its
  // runtime schema of that config lacks them, so respond() drops them before sending (and has no seed
  // option at all). The keys LM Studio's app sends for them, llm.prediction.llama.xtcProbability and
  // .xtcThreshold ({checked, value}), go through the SDK's `raw` KV config, as the seed does.
  const model = (): Promise<LLM> => lmstudio.llm.model(MODEL);
  const rawField = (key: string, value: number) => ({ key: `llm.prediction.${key}`, value: { checked: true, value } });
  const rawKeys: Record<string, string> = { seed: "seed", xtc_probability: "llama.xtcProbability", xtc_threshold: "llama.xtcThreshold" };
  const reply = async (settings: Settings) => {
    const { temperature, ...rest } = settings as Record<string, number>;
    const raw = { fields: Object.entries(rest).map(([name, value]) => rawField(rawKeys[name]!, value)) };
    return (await (await model()).respond(prompt, { maxTokens: REPLY_TOKENS, temperature, raw })).content;
  };

  test("XTC changes a seeded reply, the same way every time", async () => {
    await expectXtcTakesEffect(reply);
  });

  test("the prediction's config reports the XTC it ran with; the SDK's own xtcProbability option never arrives", async () => {
    const llm = await model();
    const xtcKeys = (config: KVConfig) => config.fields.filter((field) => field.key.includes("xtc"));
    const viaRaw = await llm.respond(prompt, { maxTokens: 2, raw: { fields: [rawField("llama.xtcProbability", 1), rawField("llama.xtcThreshold", 0)] } });
    expect(xtcKeys(viaRaw.predictionConfig)).toEqual([rawField("llama.xtcProbability", 1), rawField("llama.xtcThreshold", 0)]);
    // When a later SDK sends these, this fails: then use the documented options in the tests above.
    const viaOption = await llm.respond(prompt, { maxTokens: 2, xtcProbability: 1, xtcThreshold: 0 });
    expect(xtcKeys(viaOption.predictionConfig)).toEqual([]);
  });

  test("a bad value is an error naming the config key", async () => {
    const refused = await reply({ xtc_probability: 2 }).then(() => undefined, (e: unknown) => e as Error);
    expect(refused).toBeInstanceOf(Error);
    expect(refused!.message).toContain('"llm.prediction.llama.xtcProbability"');
    const threshold = await reply({ xtc_threshold: -0.5 }).then(() => undefined, (e: unknown) => e as Error);
    expect(threshold!.message).toContain('"llm.prediction.llama.xtcThreshold"');
  });
});
