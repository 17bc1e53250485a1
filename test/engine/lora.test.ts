// Modelfile ADAPTER: a LoRA adapter GGUF changes what the model generates, and a mismatched one is refused.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Engine } from "../../src/engine/engine.ts";
import type { EngineEvent, GenerateRequest } from "../../src/engine/types.ts";
import { ensureModel } from "../../scripts/gen-models.ts";

function generate(engine: Engine, request: Omit<GenerateRequest, "id">): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const tokens: number[] = [];
    engine.submit({ ...request, id: crypto.randomUUID() }, (event: EngineEvent) => {
      if (event.type === "token") tokens.push(event.token);
      else if (event.type === "done") resolve(tokens);
      else if (event.type === "error") reject(new Error(event.message));
    });
  });
}

describe("LoRA adapters", () => {
  let base: Engine;
  let adapted: Engine;
  const request = { prompt: "Hello, how are you?", maxTokens: 12, sampling: { temperature: 0 }, ignoreEos: true };

  beforeAll(async () => {
    const modelPath = await ensureModel("tiny-llama");
    const options = { modelPath, parallel: 1, contextPerSequence: 256, threads: 2 };
    base = Engine.load(options);
    adapted = Engine.load({ ...options, loraAdapters: [await ensureModel("tiny-llama-lora")] });
  });
  afterAll(() => {
    base.dispose();
    adapted.dispose();
  });

  test("an adapter changes the greedy output, and the same adapter gives the same output again", async () => {
    const plain = await generate(base, request);
    const withAdapter = await generate(adapted, request);
    expect(withAdapter).toHaveLength(12);
    expect(withAdapter).not.toEqual(plain);
    expect(await generate(adapted, request)).toEqual(withAdapter);
  });

  test("an adapter made for another architecture is refused with llama.cpp's reason", async () => {
    const modelPath = await ensureModel("tiny-lfm2");
    const lora = await ensureModel("tiny-llama-lora");
    expect(() => Engine.load({ modelPath, parallel: 1, contextPerSequence: 256, threads: 2, loraAdapters: [lora] })).toThrow(/LoRA adapter/);
  });

  test("a missing adapter file is refused", async () => {
    const modelPath = await ensureModel("tiny-llama");
    expect(() => Engine.load({ modelPath, parallel: 1, contextPerSequence: 256, threads: 2, loraAdapters: ["/nonexistent/adapter.gguf"] })).toThrow(/no such file/);
  });
});

