// The host prompt cache through a real `llamux serve --cache-ram` on loopback, with the official OpenAI
// and Anthropic clients: one sequence, two sessions taking turns, so each turn finds its sequence given to
// the other session; the restored prefix is reported as cached tokens and in /metrics.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "./serve-fixture.ts";

let server: RunningServer;
let openai: OpenAI;
let anthropic: Anthropic;
const MODEL = "tiny-chat";

beforeAll(async () => {
  const model = await ensureModel("tiny-llama");
  server = await startServer([model, "--profile", "b", "--served-model-name", MODEL, "--max-model-len", "1024", "--parallel", "1", "--threads", "2", "--cache-ram", "16"]);
  openai = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "placeholder", maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: server.baseUrl, apiKey: "placeholder", maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

function system(topic: string): string {
  return Array.from({ length: 12 }, (_, i) => `${topic} rule ${i}: answer about ${topic} plainly and keep it short.`).join("\n");
}

describe("--cache-ram", () => {
  test("a session's next turn after another session took the sequence reads its prefix from the cache", async () => {
    const dragons = [{ role: "system" as const, content: system("Dragons") }, { role: "user" as const, content: "Who are you?" }];
    const first = await openai.chat.completions.create({ model: MODEL, messages: dragons, max_tokens: 3, temperature: 0 });
    expect(first.usage!.prompt_tokens).toBeGreaterThan(150);
    // another session takes the only sequence
    await anthropic.messages.create({ model: MODEL, max_tokens: 3, system: system("Weather"), messages: [{ role: "user", content: "Rain?" }] });
    const next = await openai.chat.completions.create({
      model: MODEL, max_tokens: 3, temperature: 0,
      messages: [...dragons, { role: "assistant", content: "I am a dragon." }, { role: "user", content: "And then?" }],
    });
    expect(next.usage!.prompt_tokens_details?.cached_tokens).toBeGreaterThanOrEqual(first.usage!.prompt_tokens - 8);
    // and the other session's next turn, on Messages
    const weather = await anthropic.messages.create({
      model: MODEL, max_tokens: 3, system: system("Weather"),
      messages: [{ role: "user", content: "Rain?" }, { role: "assistant", content: "No." }, { role: "user", content: "Snow?" }],
    });
    expect(weather.usage.cache_read_input_tokens).toBeGreaterThan(150);

    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
    const value = (name: string) => Number(metrics.match(new RegExp(`^${name}\\{[^}]*model_name="${MODEL}"[^}]*\\} (\\S+)$`, "m"))?.[1]);
    expect(value("llamux:prompt_cache_restores")).toBeGreaterThanOrEqual(2);
    expect(value("llamux:prompt_cache_bytes")).toBeGreaterThan(0);
    expect(value("llamux:prompt_cache_bytes")).toBeLessThanOrEqual(16 * 1048576);
    expect(value("vllm:prefix_cache_hits_total")).toBeGreaterThan(300);
  });
});
