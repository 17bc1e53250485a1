// Profile a with OLLAMA_MAX_LOADED_MODELS=2: requests for one model with other load options (num_ctx)
// reload it one after another, and neither that reload nor the cap ever stops an engine while a request
// still uses it (between rendering, generating and tokenizing its reply context, or while it streams).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ensureModel } from "../../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "../serve-fixture.ts";

let server: RunningServer;
let llama: string;

beforeAll(async () => {
  llama = await ensureModel("tiny-llama");
  server = await startServer(["--profile", "a"], { OLLAMA_MAX_LOADED_MODELS: "2", LLAMUX_MODELS: "" });
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

const generate = (num_ctx: number, stream: boolean) => fetch(`${server.baseUrl}/api/generate`, {
  method: "POST",
  body: JSON.stringify({ model: llama, prompt: "Hi", stream, options: { num_ctx, num_predict: 8 } }),
});

/** The last NDJSON line of a streamed answer, or the JSON of a whole one. */
async function lastChunk(response: Response): Promise<Record<string, unknown>> {
  const lines = (await response.text()).trim().split("\n");
  return JSON.parse(lines.at(-1)!) as Record<string, unknown>;
}

test("four concurrent requests with num_ctx 512..515 all answer in full: none loses its engine to another's reload", async () => {
  for (const stream of [false, true, false]) {
    const answers = await Promise.all([512, 513, 514, 515].map(async (numCtx) => {
      const response = await generate(numCtx, stream);
      return { status: response.status, last: await lastChunk(response) };
    }));
    for (const { status, last } of answers) {
      expect(last.error).toBeUndefined();
      expect(status).toBe(200);
      expect(last.done).toBe(true);
      expect(Array.isArray(last.context)).toBe(true);
    }
  }
  expect(server.stderr()).not.toContain("while the request was running");
}, 300_000);
