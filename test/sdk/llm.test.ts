// The batch API end to end on the tiny LFM2 model, imported by the package's own name as a program
// that depends on llamux would: one LLM (one engine Worker) for the whole file.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LLM, SamplingParams, DisposedError } from "llamux";
import { ensureModel } from "../../scripts/gen-models.ts";

let llm: LLM;
let modelPath: string;

beforeAll(async () => {
  modelPath = await ensureModel("tiny-lfm2");
  llm = new LLM({ model: modelPath, max_model_len: 512, max_num_seqs: 4 });
}, 120_000);

afterAll(async () => {
  await llm.dispose();
});

const greedy = new SamplingParams({ temperature: 0, max_tokens: 4 });

describe("SamplingParams", () => {
  test("has vLLM's defaults", () => {
    const params = new SamplingParams();
    expect(params).toMatchObject({ n: 1, temperature: 1, top_p: 1, top_k: 0, min_p: 0, repetition_penalty: 1, presence_penalty: 0, frequency_penalty: 0, max_tokens: 16, seed: null, stop: [], ignore_eos: false, skip_special_tokens: true });
  });

  test("rejects values vLLM rejects", () => {
    expect(() => new SamplingParams({ top_p: 0 })).toThrow("top_p must be in (0, 1]");
    expect(() => new SamplingParams({ n: 2, temperature: 0 })).toThrow("n must be 1 when using greedy sampling");
    expect(() => new SamplingParams({ stop: ["a", ""] })).toThrow("stop cannot contain an empty string");
    expect(() => new SamplingParams({ max_tokens: 0 })).toThrow("max_tokens must be at least 1");
    expect(() => new SamplingParams({ presence_penalty: 3 })).toThrow("presence_penalty must be in [-2, 2]");
  });

  test("maps to engine settings with vLLM's meanings (top_k -1 disables, tiny temperature raised)", () => {
    const request = new SamplingParams({ top_k: -1, temperature: 0.001, seed: 7, max_tokens: 3, stop: "x" }).toRequest();
    expect(request.sampling).toMatchObject({ topK: 0, temperature: 0.01, seed: 7, topP: 1, minP: 0 });
    expect(request).toMatchObject({ maxTokens: 3, stop: ["x"] });
  });
});

describe("LLM", () => {
  test("chat with 16 prompts returns 16 results in input order, each as the prompt alone gives it", async () => {
    const prompts = Array.from({ length: 16 }, (_, i) => `Question number ${i}: what comes next?`);
    const batch = await llm.chat(prompts, greedy, { progress: false });
    expect(batch).toHaveLength(16);
    for (const [i, result] of batch.entries()) {
      expect(result.prompt).toContain(`Question number ${i}:`);
      expect(result.prompt).toContain("<|im_start|>assistant\n");
      expect(result.outputs).toHaveLength(1);
      expect(result.outputs[0]!.token_ids.length).toBeGreaterThan(0);
      expect(result.outputs[0]!.finish_reason).toBeOneOf(["stop", "length"]);
    }
    // Greedy decoding is deterministic: each batched answer equals the one the prompt gets on its own.
    for (const i of [0, 15]) {
      const [alone] = await llm.chat(prompts[i]!, greedy);
      expect(alone!.outputs[0]!.token_ids).toEqual(batch[i]!.outputs[0]!.token_ids);
      expect(alone!.outputs[0]!.text).toBe(batch[i]!.outputs[0]!.text);
    }
  }, 240_000);

  test("chat takes conversations and applies the template to each", async () => {
    const results = await llm.chat([
      [{ role: "system", content: "Be brief." }, { role: "user", content: "one" }],
      [{ role: "user", content: [{ type: "text", text: "two" }] }],
    ], greedy, { progress: false });
    expect(results.map((r) => r.prompt)).toEqual([
      "<|startoftext|><|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\none<|im_end|>\n<|im_start|>assistant\n",
      "<|startoftext|><|im_start|>user\ntwo<|im_end|>\n<|im_start|>assistant\n",
    ]);
  });

  test("generate completes raw prompts and token prompts; max_tokens ends with length", async () => {
    const [text, tokens] = await llm.generate(["Once upon a time", { prompt_token_ids: [50257, 7454, 2402] }], new SamplingParams({ max_tokens: 5, ignore_eos: true, seed: 3 }), { progress: false });
    expect(text!.prompt).toBe("Once upon a time");
    expect(text!.prompt_token_ids[0]).toBe(50257); // BOS added as vLLM's tokenizer does
    expect(text!.outputs[0]).toMatchObject({ finish_reason: "length", stop_reason: null });
    expect(text!.outputs[0]!.token_ids).toHaveLength(5);
    expect(tokens!.prompt_token_ids).toEqual([50257, 7454, 2402]);
    expect(tokens!.prompt).toBe("<|startoftext|>Once upon");
  });

  test("generate reads text and token prompts through the chat orchestrator: the same tokens give the same reply, a prompt longer than the context is refused as chat's", async () => {
    const [text] = await llm.generate("Once upon a time", greedy, { progress: false });
    const [tokens] = await llm.generate({ prompt_token_ids: text!.prompt_token_ids }, greedy, { progress: false });
    expect(tokens!.prompt).toBe(`<|startoftext|>${text!.prompt}`);
    expect(tokens!.outputs[0]!.token_ids).toEqual(text!.outputs[0]!.token_ids);
    expect(tokens!.outputs[0]!.text).toBe(text!.outputs[0]!.text);
    const long = { prompt_token_ids: Array.from({ length: 600 }, () => 7454) };
    // (caught rather than expect().rejects, which stalls here while the engine's Worker answers)
    const refused = await llm.generate(long, greedy, { progress: false }).catch((error: unknown) => error);
    expect((refused as Error).message).toBe("Cannot fit a prompt of 600 tokens in a context of 512");
    const chat = await llm.chat(Array.from({ length: 700 }, (_, i) => `word${i}`).join(" "), greedy, { progress: false }).catch((error: unknown) => error);
    expect((chat as Error).message).toMatch(/^Cannot fit a prompt of \d+ tokens in a context of 512$/);
  });

  test("n samples several outputs per prompt", async () => {
    const [result] = await llm.generate("Hello", { n: 3, max_tokens: 4, ignore_eos: true, temperature: 1, seed: 11 });
    expect(result!.outputs.map((o) => o.index)).toEqual([0, 1, 2]);
    expect(new Set(result!.outputs.map((o) => o.token_ids.join(","))).size).toBeGreaterThan(1);
  });

  test("a stop string ends the output and is reported as the stop reason", async () => {
    const [probe] = await llm.generate("Hi", { max_tokens: 6, temperature: 0, ignore_eos: true });
    const stop = probe!.outputs[0]!.text.trim().slice(0, 2);
    const [stopped] = await llm.generate("Hi", { max_tokens: 6, temperature: 0, ignore_eos: true, stop: [stop] });
    expect(stopped!.outputs[0]!.finish_reason).toBe("stop");
    expect(stopped!.outputs[0]!.stop_reason).toBe(stop);
    expect(stopped!.outputs[0]!.text).not.toContain(stop);
  });

  test("a list of sampling params must match the prompts", async () => {
    await expect(llm.generate(["a", "b"], [greedy])).rejects.toThrow("must be the same");
  });

  test("a missing model fails on the first call, not in the constructor", async () => {
    const missing = new LLM({ model: "/nonexistent/model.gguf" });
    await expect(missing.generate("x")).rejects.toThrow('Cannot load model "/nonexistent/model.gguf"');
    await missing.dispose();
  });

  test("a disposed LLM refuses calls", async () => {
    const other = new LLM({ model: modelPath, max_model_len: 128, max_num_seqs: 1 });
    await other.generate("x", { max_tokens: 1 });
    await other.dispose();
    await expect(other.generate("x")).rejects.toBeInstanceOf(DisposedError);
  });
});

describe("models by store name", () => {
  test("a stored model loads by name and its Ollama TEMPLATE and SYSTEM write the chat prompt", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { ModelStore } = await import("../../src/store/model-store.ts");
    const { createModel } = await import("../../src/store/create-model.ts");
    const root = mkdtempSync(join(tmpdir(), "llamux-sdk-store-"));
    try {
      await createModel(ModelStore.open({ root }), "tiny-chat", { from: modelPath, template: "[{{ .System }}] Q: {{ .Prompt }} A:", system: "Be terse." });
      const stored = new LLM({ model: "tiny-chat", store_root: root, max_model_len: 128, max_num_seqs: 1 });
      try {
        const [result] = await stored.chat("hello", { max_tokens: 2 });
        expect(result!.prompt).toBe("[Be terse.] Q: hello A:");
        expect(result!.outputs[0]!.token_ids.length).toBeGreaterThan(0);
      } finally {
        await stored.dispose();
      }
      const missing = new LLM({ model: "not-there", store_root: root });
      await expect(missing.generate("x")).rejects.toThrow('Cannot load model "not-there": no such file, and no model of that name in the store');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
