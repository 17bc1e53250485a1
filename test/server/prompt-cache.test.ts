// The host prompt cache through a real `llamux serve --cache-ram` on loopback, with the official OpenAI
// and Anthropic clients: one sequence, two sessions taking turns, so each turn finds its sequence given to
// the other session; the restored prefix is reported as cached tokens and in /metrics.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { ensureModel } from "../../scripts/gen-models.ts";
import { freePort, startServer, type RunningServer } from "./serve-fixture.ts";

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

describe("--cache-disk", () => {
  test("after a restart, a session's next turn reads its prefix from the disk tier, over the Anthropic API", async () => {
    const { mkdtempSync, readdirSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dir = mkdtempSync(join(tmpdir(), "llamux-restart-"));
    const model = await ensureModel("tiny-llama");
    // the server's defaults but for the folder (and a small context, for speed)
    const args = [model, "--profile", "a", "--served-model-name", MODEL, "--ctx-size", "2048", "--threads", "2", "--cache-disk", dir];
    const files = () => readdirSync(dir, { recursive: true }).map(String).filter((name) => name.endsWith(".state"));
    const longSystem = Array.from({ length: 40 }, (_, i) => `Repository rule ${i}: read the file before you edit it and run the tests after.`).join("\n");
    const turn1: Anthropic.MessageParam[] = [{ role: "user", content: "List the failing tests." }];
    try {
      const before = await startServer(args);
      const client = new Anthropic({ baseURL: before.baseUrl, apiKey: "placeholder", maxRetries: 0 });
      const first = await client.messages.create({ model: MODEL, system: longSystem, messages: turn1, max_tokens: 4, ...({ temperature: 0 } as object) });
      expect(first.usage.input_tokens).toBeGreaterThan(600);
      // the state is written when the engine is idle; a clean stop waits for what is on its way
      for (let i = 0; i < 200 && files().length === 0; i++) await Bun.sleep(50);
      await before.stop();
      expect(files().length).toBeGreaterThan(0);

      const after = await startServer(args);
      try {
        const again = new Anthropic({ baseURL: after.baseUrl, apiKey: "placeholder", maxRetries: 0 });
        const reply = first.content.map((block) => (block.type === "text" ? block.text : "")).join("");
        const turn2: Anthropic.MessageParam[] = [...turn1, { role: "assistant", content: reply || "..." }, { role: "user", content: "And the slowest one?" }];
        const second = await again.messages.create({ model: MODEL, system: longSystem, messages: turn2, max_tokens: 4, ...({ temperature: 0 } as object) });
        const cached = second.usage.cache_read_input_tokens ?? 0;
        const total = second.usage.input_tokens + cached + (second.usage.cache_creation_input_tokens ?? 0);
        // everything up to the first turn's question comes back from disk
        expect(cached / total).toBeGreaterThan(0.8);
      } finally {
        await after.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});

describe("the disk tier's folder", () => {
  test("a default folder that cannot be made turns the tier off with a warning; a folder asked for stops the start", async () => {
    const { mkdtempSync, rmSync, writeFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(join(tmpdir(), "llamux-unwritable-"));
    // a regular file where a folder would have to be: no one, root included, can make a folder under it
    const blocker = join(dir, "file");
    writeFileSync(blocker, "");
    const model = await ensureModel("tiny-llama");
    try {
      const server = await startServer([model, "--profile", "b", "--served-model-name", MODEL, "--max-model-len", "512", "--parallel", "1"], { LLAMUX_CACHE_DISK: "", LLAMUX_CACHE_DIR: join(blocker, "cache") });
      try {
        expect(server.stderr()).toContain(`Cannot use prompt cache directory "${join(blocker, "cache", "prompts")}"`);
        expect(server.stderr()).toContain("prompt states are kept in memory only");
        const client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "placeholder", maxRetries: 0 });
        const reply = await client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "Hi" }], max_tokens: 2 });
        expect(reply.usage!.completion_tokens).toBeGreaterThan(0);
      } finally {
        await server.stop();
      }
      const named = Bun.spawn([process.execPath, join(import.meta.dir, "../../src/main.ts"), "serve", model, "--profile", "b", "--port", String(await freePort()), "--cache-disk", join(blocker, "prompts")], { stdout: "ignore", stderr: "pipe" });
      const stray = setTimeout(() => named.kill(), 60_000);
      const exitCode = await named.exited;
      clearTimeout(stray);
      expect(exitCode).not.toBe(0);
      expect(await new Response(named.stderr).text()).toContain(`Cannot use prompt cache directory "${join(blocker, "prompts")}"`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
