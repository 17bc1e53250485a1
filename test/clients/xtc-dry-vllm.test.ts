// The XTC and DRY samplers end to end on profile b (vLLM), through the `openai` client: chat completions
// and the Responses API with the fields as extra body, as vLLM's users send its extra sampling fields.
// Each must change the reply (sampler-fixture.ts says how), and a bad value must be a 400 whose param is
// the field. One server for the file.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { type ClientServer, MODEL, startClientServer } from "./client-fixture.ts";
import { BAD_VALUES, REPLY_TOKENS, type Reply, type Settings, expectDryTakesEffect, expectXtcTakesEffect } from "./sampler-fixture.ts";

let server: ClientServer;
let client: OpenAI;

beforeAll(async () => {
  server = await startClientServer("b");
  client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "unused", maxRetries: 0 });
}, 180_000);

afterAll(async () => {
  await server?.stop();
});

const prompt = "Tell me a story";

/** A 400 in vLLM's OpenAI shape whose param is the field, for each bad value. */
async function expectRefusals(reply: Reply): Promise<void> {
  for (const { field, value } of BAD_VALUES) {
    const error = await reply({ [field]: value }).then(() => undefined, (e: unknown) => e);
    if (!(error instanceof OpenAI.APIError)) throw new Error(`expected an APIError for ${field}, got ${String(error)}`);
    expect(error.status).toBe(400);
    expect(error.param).toBe(field);
    expect(error.message).toContain(`"${field}"`);
  }
}

describe("chat.completions.create (extra body)", () => {
  const reply = async (settings: Settings) =>
    (await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: prompt }], max_tokens: REPLY_TOKENS, ...settings })).choices[0]!.message.content!;

  test("XTC changes a seeded reply, the same way every time", async () => {
    await expectXtcTakesEffect(reply);
  });

  test("DRY breaks a greedy loop", async () => {
    await expectDryTakesEffect(reply);
  });

  test("a bad value is a 400 whose param is the field", async () => {
    await expectRefusals(reply);
  });
});

describe("responses.create (extra fields)", () => {
  const reply = async (settings: Settings) =>
    (await client.responses.create({ model: MODEL, input: prompt, max_output_tokens: REPLY_TOKENS, ...settings })).output_text;

  test("XTC changes a seeded reply, the same way every time", async () => {
    await expectXtcTakesEffect(reply);
  });

  test("DRY breaks a greedy loop", async () => {
    await expectDryTakesEffect(reply);
  });

  test("a bad value is a 400 whose param is the field", async () => {
    await expectRefusals(reply);
  });
});
