// How a model is loaded, decided without loading anything: the options a model gets from the server's
// settings, its file's header, a grown context and a request's own options; and what the headers of
// generated models say.
import { describe, expect, test } from "bun:test";
import { contextOptions, contextWithinTraining, requestedLoadOptions, RERANK_SEQUENCES, type LoadInputs } from "../../src/server/model-load-options.ts";
import { readHeaderFacts } from "../../src/server/model-facts.ts";
import { ensureModel } from "../../scripts/gen-models.ts";

const generative = { embeds: false, reranks: false, trainedContext: 32_768 };
const inputs = (over: Partial<LoadInputs> = {}): LoadInputs => ({ settings: { parallel: 4, contextPerSequence: undefined }, facts: generative, grown: undefined, adapters: undefined, ...over });
const served = { path: "/m/model.gguf", pinned: true };
const stored = { path: "/m/stored.gguf", pinned: false, stored: { adapterPaths: ["/m/adapter.gguf"], draftPath: "/m/draft.gguf" } };

describe("the context a load gets", () => {
  test("by default the trained context, as one pool the sequences share (vLLM's default)", () => {
    expect(contextOptions(inputs())).toEqual({ contextPerSequence: 32_768, sharedContext: 32_768 });
  });

  test("the server's context per sequence over the trained one; a grown model's over both; a request's own size over all", () => {
    const settings = { parallel: 4, contextPerSequence: 4096 };
    expect(contextOptions(inputs({ settings }))).toEqual({ contextPerSequence: 4096 });
    const grown = { contextPerSequence: 8192, sharedContext: 32_768 };
    expect(contextOptions(inputs({ settings, grown }))).toEqual(grown);
    expect(contextOptions(inputs({ settings, grown }), { contextPerSequence: 2048 })).toEqual({});
    expect(requestedLoadOptions(served, inputs({ settings, grown }), { contextPerSequence: 2048 }).contextPerSequence).toBe(2048);
  });

  test("a file that does not say what it was trained for leaves the engine's own default", () => {
    expect(contextOptions(inputs({ facts: { ...generative, trainedContext: undefined } }))).toEqual({});
  });

  test("more than the trained context is held to it; less, or no size, stays", () => {
    expect(contextWithinTraining(65_536, 32_768)).toBe(32_768);
    expect(contextWithinTraining(4096, 32_768)).toBe(4096);
    expect(contextWithinTraining(undefined, 32_768)).toBeUndefined();
    expect(contextWithinTraining(65_536, undefined)).toBe(65_536);
  });
});

describe("the options a model is loaded with", () => {
  test("the server's settings reach every generative load", () => {
    const settings = { parallel: 2, contextPerSequence: 1024, threads: 3, queueLimit: 9, kvCacheType: "q8_0" as const, cacheRamMiB: 0, cacheDisk: { dir: "/c", limitMiB: 10 } };
    expect(requestedLoadOptions(served, inputs({ settings }))).toEqual({
      modelPath: served.path, parallel: 2, contextPerSequence: 1024, threads: 3, queueLimit: 9, kvCacheType: "q8_0", cacheRamMiB: 0, cacheDisk: { dir: "/c", limitMiB: 10 },
    });
  });

  test("an embedding model takes one input at a time and a reranker several pairs; neither gets the generative settings", () => {
    const settings = { parallel: 4, contextPerSequence: 1024, threads: 2, cacheRamMiB: 64 };
    expect(requestedLoadOptions(served, inputs({ settings, facts: { embeds: true, reranks: false, trainedContext: 512 } }))).toEqual({ modelPath: served.path, embeddings: true, parallel: 1, threads: 2 });
    expect(requestedLoadOptions(served, inputs({ settings, facts: { embeds: true, reranks: true, trainedContext: 512 } }))).toEqual({ modelPath: served.path, embeddings: true, parallel: RERANK_SEQUENCES, rank: true, threads: 2 });
  });

  test("speculation as `serve` says for a served model; a stored model's DRAFT layer for a stored one, with its ADAPTER layers", () => {
    const speculative = { method: "ngram" as const, maxDraftTokens: 4 };
    expect(requestedLoadOptions(served, inputs({ settings: { parallel: 1, contextPerSequence: 512, speculative } })).speculative).toEqual(speculative);
    const options = requestedLoadOptions(stored, inputs({ settings: { parallel: 1, contextPerSequence: 512, speculative } }));
    expect(options.speculative).toEqual({ method: "draft", draftModelPath: "/m/draft.gguf" });
    expect(options.loraAdapters).toEqual(["/m/adapter.gguf"]);
  });

  test("per-request LoRA adapters go to a served model's engine only", () => {
    const adapters = { lora: { modules: [{ name: "a", path: "/m/a.gguf" }], maxLoras: 1, maxRank: 16 } };
    expect(requestedLoadOptions(served, inputs({ adapters })).lora).toEqual(adapters.lora);
    expect(requestedLoadOptions({ ...served, pinned: false }, inputs({ adapters })).lora).toBeUndefined();
  });

  test("a projector travels with the model; a request's overrides win", () => {
    const options = requestedLoadOptions({ ...served, projectorPath: "/m/mmproj.gguf" }, inputs(), { parallel: 1, threads: 1 });
    expect(options.projectorPath).toBe("/m/mmproj.gguf");
    expect([options.parallel, options.threads]).toEqual([1, 1]);
  });
});

describe("what generated models' headers say", () => {
  test("a generative model, an embedding model and a reranker", async () => {
    const llama = readHeaderFacts(await ensureModel("tiny-llama"));
    expect(llama.embeds).toBe(false);
    expect(llama.reranks).toBe(false);
    expect(llama.trainedContext).toBeGreaterThan(0);
    expect(readHeaderFacts(await ensureModel("tiny-bert"))).toMatchObject({ embeds: true, reranks: false });
    expect(readHeaderFacts(await ensureModel("tiny-bert-rerank"))).toMatchObject({ embeds: true, reranks: true });
  });
});
