// The Conversation API through RemoteModelRunner against a real `llamux serve` on loopback (profile b,
// vLLM's), with the tiny LFM2 model: the same flow as in process, the server reading the calls.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Chunk, Complete, GenerationError, RemoteModelRunner } from "llamux";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "../server/serve-fixture.ts";
import { collect, weatherFunction } from "./tool-flow.ts";

let server: RunningServer;
let runner: RemoteModelRunner;

beforeAll(async () => {
  const model = await ensureModel("tiny-lfm2");
  server = await startServer([model, "--profile", "b", "--served-model-name", "tiny-lfm2", "--max-model-len", "512", "--api-key", "secret"]);
  runner = new RemoteModelRunner({ baseURL: `${server.baseUrl}/v1`, apiKey: "secret", model: "tiny-lfm2" });
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

describe("RemoteModelRunner", () => {
  test("streams the reply as Chunks, then Complete with the server's token counts; the exchange joins the history", async () => {
    const conversation = runner.createConversation("Be brief.");
    const responses = await collect(conversation.generateResponse("Hello", { maxTokens: 5, temperature: 0, seed: 1 }));
    const complete = responses.at(-1) as Complete;
    expect(complete).toBeInstanceOf(Complete);
    const text = responses.filter((r) => r instanceof Chunk).map((r) => (r as Chunk).text).join("");
    expect(complete.fullMessage.text).toBe(text);
    expect(complete.stats.completionTokens).toBeGreaterThan(0);
    expect(complete.stats.completionTokens).toBeLessThanOrEqual(5);
    expect(complete.stats.promptTokens).toBeGreaterThan(5);
    expect(complete.finishReason).toBeOneOf(["stop", "length"]);
    expect(conversation.history.map((m) => m.role)).toEqual(["system", "user", "assistant"]);
  });

  test("a conversation from history sends the whole history", async () => {
    const conversation = runner.createConversationFromHistory([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello!" },
    ]);
    const responses = await collect(conversation.generateResponse({ role: "user", content: "Again" }, { maxTokens: 3, seed: 2 }));
    const complete = responses.at(-1) as Complete;
    expect(complete).toBeInstanceOf(Complete);
    // The prompt counted by the server covers all four messages, not just the last.
    const single = await collect(runner.createConversation().generateResponse("Again", { maxTokens: 3, seed: 2 }));
    expect(complete.stats.promptTokens).toBeGreaterThan((single.at(-1) as Complete).stats.promptTokens);
  });

  test("a server error arrives as MessageResponse.Error with the server's message", async () => {
    const wrong = new RemoteModelRunner({ baseURL: `${server.baseUrl}/v1`, apiKey: "secret", model: "no-such-model" });
    const responses = await collect(wrong.createConversation().generateResponse("Hello"));
    expect(responses).toHaveLength(1);
    expect(responses[0]).toBeInstanceOf(GenerationError);
    expect((responses[0] as GenerationError).message).toContain("no-such-model");
  });

  test("a wrong API key arrives as an Error too", async () => {
    const unauthorised = new RemoteModelRunner({ baseURL: `${server.baseUrl}/v1`, apiKey: "wrong", model: "tiny-lfm2" });
    const [response] = await collect(unauthorised.createConversation().generateResponse("Hello"));
    expect(response).toBeInstanceOf(GenerationError);
    expect((response as GenerationError).message).toContain("401");
  });

  test("a named toolChoice that is not registered is refused before any request", async () => {
    const conversation = runner.createConversation();
    conversation.registerFunction(weatherFunction);
    const [response] = await collect(conversation.generateResponse("Hello", { toolChoice: { name: "nope" } }));
    expect((response as GenerationError).message).toBe('Cannot force a call of "nope": no function of that name is registered');
  });
});
