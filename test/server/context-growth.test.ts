// Context growth: a request larger than the loaded context reloads the model with the next power of two
// (within its trained context and the memory), once its running requests end, and the sequences share
// that memory instead of each getting it. Directly on the model service, and through the chat routes of
// real `llamux serve` processes started at their defaults, where /api/ps and /api/v0/models show it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ModelManager } from "../../src/engine/model-manager.ts";
import { ModelService } from "../../src/server/model-service.ts";
import { grownContextSize } from "../../src/server/context-growth.ts";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "./serve-fixture.ts";

let agentModel: string;
const managers: ModelManager[] = [];

beforeAll(async () => {
  agentModel = await ensureModel("tiny-llama-agent");
});
afterAll(async () => {
  await Promise.all(managers.map((m) => m.stopAll()));
});

function service(options: { growContext: boolean; contextPerSequence: number | undefined }) {
  const manager = new ModelManager();
  managers.push(manager);
  return new ModelService(manager, [{ path: agentModel, name: "agent" }], { parallel: 4, threads: 2, ...options });
}

test("grownContextSize: the next power of two from 4096 on, within the trained context", () => {
  expect(grownContextSize(100, 65536)).toBe(4096);
  expect(grownContextSize(11627, 65536)).toBe(16384);
  expect(grownContextSize(40000, 65536)).toBe(65536);
  expect(grownContextSize(40000, 50000)).toBe(50000);
  expect(grownContextSize(65537, 65536)).toBeUndefined();
  expect(grownContextSize(10, undefined)).toBeUndefined();
});

describe("ModelService.growContext", () => {
  test("reloads the model with room for the request, a KV stream per sequence where memory holds them, after its running request ends", async () => {
    const models = service({ growContext: true, contextPerSequence: 4096 });
    const model = models.resolve("agent");
    const before = await models.engine(model);
    expect(before.info.contextPerSequence).toBe(4096);
    expect(before.info.sharedContext).toBe(4 * 4096);
    // every sequence's whole context fits: a KV stream each, as llama-server loads it
    expect(before.info.sharedKvPool).toBe(false);
    // a request running on the old instance finishes before it is replaced
    const running = (async () => {
      let tokens = 0;
      for await (const event of before.generate({ prompt: "Hello there", maxTokens: 16, ignoreEos: true })) if (event.type === "token") tokens++;
      return tokens;
    })();
    expect(await models.growContext(model, 20_000)).toBe(true);
    expect(await running).toBe(16);
    expect(before.alive).toBe(false);
    const [after] = models.loadedOf(model);
    expect(after!.engine.info.contextPerSequence).toBe(32768);
    // a small model's 4 × 32768 cells fit in half the free memory: streams, so that attention never reads
    // another session's cached prefix
    expect(after!.engine.info.sharedContext).toBe(4 * 32768);
    expect(after!.engine.info.sharedKvPool).toBe(false);
    // later loads keep the grown size; a request that fits needs no reload
    expect((await models.engine(model)).pid).toBe(after!.engine.pid);
    expect(await models.growContext(model, 30_000)).toBe(true);
    expect(models.loadedOf(model)[0]!.engine.pid).toBe(after!.engine.pid);
    // beyond the trained context there is nothing to grow to
    expect(await models.growContext(model, 70_000)).toBe(false);
  });

  test("is off where the context is a limit (--max-model-len on profile b)", async () => {
    const models = service({ growContext: false, contextPerSequence: 4096 });
    const model = models.resolve("agent");
    expect(await models.growContext(model, 5000)).toBe(false);
    expect(models.loadedOf(model).every((l) => l.engine.info.contextPerSequence === 4096)).toBe(true);
  });

  test("without a context size (profile b's default) the model loads its trained context, one pool for every sequence", async () => {
    const models = service({ growContext: true, contextPerSequence: undefined });
    const engine = await models.engine(models.resolve("agent"));
    expect(engine.info.contextPerSequence).toBe(65536);
    expect(engine.info.sharedContext).toBe(65536);
    expect(engine.info.sharedKvPool).toBe(true);
  });
});

describe("through the chat routes of servers at their defaults", () => {
  const servers: Partial<Record<string, RunningServer>> = {};
  // about 6,000 tokens: more than the 4096 loaded by default on profiles a and c
  const longPrompt = "The agent reads the files of the project and writes code. ".repeat(500);

  beforeAll(async () => {
    const common = [agentModel, "--served-model-name", "agent", "--threads", "2"];
    servers.a = await startServer([...common, "--profile", "a"], { LLAMUX_LOG_LEVEL: "info" });
    servers.c = await startServer([...common, "--profile", "c"], { LLAMUX_LOG_LEVEL: "info" });
    servers.limited = await startServer([...common, "--profile", "b", "--max-model-len", "4096"], { LLAMUX_LOG_LEVEL: "info" });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(Object.values(servers).map((s) => s?.stop()));
  });

  const chat = (server: RunningServer) => fetch(`${server.baseUrl}/v1/chat/completions`, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "agent", messages: [{ role: "user", content: longPrompt }], max_tokens: 4 }),
  });

  test("profile a: the request is served, the log says the context grew, /api/ps shows the new size", async () => {
    const response = await chat(servers.a!);
    expect(response.status).toBe(200);
    const body = await response.json() as { usage: { prompt_tokens: number } };
    expect(body.usage.prompt_tokens).toBeGreaterThan(4096);
    expect(servers.a!.stderr()).toMatch(/growing the context of "agent" from 4096 to 8192 tokens/);
    const ps = await (await fetch(`${servers.a!.baseUrl}/api/ps`)).json() as { models: Array<{ context_length: number }> };
    expect(ps.models.map((m) => m.context_length)).toEqual([8192]);
  });

  test("profile c: served, and /api/v0/models shows the loaded context", async () => {
    expect((await chat(servers.c!)).status).toBe(200);
    const listed = await (await fetch(`${servers.c!.baseUrl}/api/v0/models/agent`)).json() as { state: string; loaded_context_length: number };
    expect(listed.state).toBe("loaded");
    expect(listed.loaded_context_length).toBe(8192);
  });

  test("beyond the trained context: the error names it, not the loaded context, and no setting that cannot help", async () => {
    // about 72,000 tokens, past the 65,536 the model was trained for (refused before any of it is processed)
    const huge = "The agent reads the files of the project and writes code. ".repeat(6000);
    const messages = await fetch(`${servers.a!.baseUrl}/v1/messages`, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "agent", max_tokens: 4, messages: [{ role: "user", content: huge }] }),
    });
    expect(messages.status).toBe(400);
    const { error } = await messages.json() as { error: { message: string } };
    expect(error.message).toMatch(/^prompt is too long: \d+ tokens > 65535 maximum \(the model was trained for a context of 65536 tokens/);
    expect(error.message).not.toMatch(/OLLAMA_CONTEXT_LENGTH|--ctx-size|num_ctx|--max-model-len/);
    const chat = await fetch(`${servers.a!.baseUrl}/v1/chat/completions`, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "agent", max_tokens: 4, messages: [{ role: "user", content: huge }] }),
    });
    expect(chat.status).toBe(400);
    expect(JSON.stringify(await chat.json())).toContain("maximum context length is 65536 tokens");
  });

  test("GET /api/v1/server/context: the most context a request can get, and what bounds it", async () => {
    const context = async (server: RunningServer) => (await fetch(`${server.baseUrl}/api/v1/server/context?model=agent`)).json();
    expect(await context(servers.a!)).toMatchObject({ model: "agent", max_context_length: 65536, bound_by: "trained" });
    expect(await context(servers.limited!)).toMatchObject({ model: "agent", max_context_length: 4096, bound_by: "setting" });
    expect((await fetch(`${servers.a!.baseUrl}/api/v1/server/context?model=nope`)).status).toBe(404);
  });

  test("profile b with --max-model-len: the limit stays, vLLM's 400", async () => {
    const response = await chat(servers.limited!);
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain("maximum context length is 4096 tokens");
    // the agents' words name a larger --max-model-len that holds the prompt (never a smaller one)
    const messages = await fetch(`${servers.limited!.baseUrl}/v1/messages`, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "agent", max_tokens: 4, messages: [{ role: "user", content: longPrompt }] }),
    });
    expect(messages.status).toBe(400);
    const { error } = await messages.json() as { error: { message: string } };
    expect(error.message).toMatch(/^prompt is too long: \d+ tokens > 4095 maximum .*start the server with --max-model-len 8192\.$/);
    expect(servers.limited!.stderr()).not.toContain("growing the context");
  });
});
