// Context-level bindings on a real model: logits, per-sequence memory operations, and sequence state
// saved from one sequence and restored into another.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { LlamaContext, LlamaModel, TokenBatch } from "../../ffi/llama.ts";
import { readFileSync, readdirSync } from "node:fs";
import { ensureModel } from "../../scripts/gen-models.ts";

let model: LlamaModel;
let context: LlamaContext;
const batch = new TokenBatch(64);

beforeAll(async () => {
  model = LlamaModel.load(await ensureModel("tiny-llama"));
  context = LlamaContext.create(model, { contextSize: 512, batchSize: 64, sequences: 2, threads: 2 });
});
afterAll(() => {
  context.dispose();
  model.dispose();
});

/** Decodes tokens into a sequence from `start`; returns the logits of the last one. */
function feed(seq: number, tokens: number[], start: number): Float32Array {
  batch.clear();
  tokens.forEach((token, i) => batch.add(token, start + i, seq, i === tokens.length - 1));
  expect(context.decode(batch)).toBe(0);
  return context.logits(batch.count - 1);
}

function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

test("model metadata is readable through the bindings", () => {
  expect(model.architecture).toBe("llama");
  expect(model.metadata("general.architecture")).toBe("llama");
  expect(model.metadata("no.such.key")).toBeUndefined();
  expect(model.allMetadata()["tokenizer.ggml.model"]).toBe("gpt2");
  expect(model.parameterCount).toBeGreaterThan(0);
  expect(model.sizeBytes).toBeGreaterThan(0);
  expect(model.chatTemplate()).toContain("<|im_start|>");
  expect(model.vocab.isEndOfGeneration(model.vocab.eos)).toBe(true);
});

test("logits have vocabulary size and depend on the input", () => {
  context.clearAll();
  const a = feed(0, model.vocab.tokenize("Hello world", { addSpecial: false }) as unknown as number[], 0);
  const b = feed(1, model.vocab.tokenize("Goodbye moon", { addSpecial: false }) as unknown as number[], 0);
  expect(a.length).toBe(model.vocab.size);
  expect(a).not.toEqual(b);
  expect(() => context.logits(63)).toThrow("did not request output");
});

test("a sequence's state restored into another sequence continues identically", () => {
  context.clearAll();
  const prompt = Array.from(model.vocab.tokenize("The quick brown fox jumps", { addSpecial: false }));
  const original = feed(0, prompt, 0);
  const state = context.saveSequence(0);
  expect(state.length).toBeGreaterThan(0);
  expect(context.restoreSequence(1, state)).toBe(true);
  expect(context.lastPosition(1)).toBe(prompt.length - 1);
  // The next token decoded in each sequence sees the same history, so the logits agree.
  const next = argmax(original);
  const fromOriginal = feed(0, [next], prompt.length);
  const fromRestored = feed(1, [next], prompt.length);
  expect(argmax(fromRestored)).toBe(argmax(fromOriginal));
  for (let i = 0; i < 100; i++) expect(fromRestored[i]!).toBeCloseTo(fromOriginal[i]!, 4);
});

test("removing the tail of a sequence rolls its positions back", () => {
  context.clearAll();
  feed(0, Array.from(model.vocab.tokenize("one two three four five six", { addSpecial: false })), 0);
  const last = context.lastPosition(0);
  expect(context.removeTokens(0, 3)).toBe(true);
  expect(context.lastPosition(0)).toBe(2);
  expect(last).toBeGreaterThan(2);
  context.clearSequence(0);
  expect(context.lastPosition(0)).toBe(-1);
});

test("a disposed context refuses use instead of crashing", async () => {
  const other = LlamaContext.create(model, { contextSize: 128, batchSize: 8, threads: 1 });
  other.dispose();
  expect(() => other.decode(batch)).toThrow("already disposed");
});

test("a file that is not GGUF is refused with llama.cpp's reason", () => {
  const notGguf = `${import.meta.dir}/context.test.ts`;
  expect(() => LlamaModel.load(notGguf)).toThrow(`Cannot load model "${notGguf}": gguf_init_from_reader: invalid magic characters`);
  expect(() => LlamaModel.load("/nonexistent.gguf")).toThrow('Cannot load model "/nonexistent.gguf": file does not exist');
});

test("a context size beyond n_ctx's uint32 is refused, never wrapped to a small one", () => {
  for (const contextSize of [2 ** 32, 2 ** 32 + 512, 1.5, -1]) {
    expect(() => LlamaContext.create(model, { contextSize, batchSize: 64, sequences: 1, threads: 1 })).toThrow(RangeError);
  }
});

test("decoding starts no threads: the context's workers stay between decodes (a threadpool, as llama.cpp's tools attach)", () => {
  // Without a pool ggml starts and joins its workers in every graph; each started thread takes a new id
  // from the kernel's counter, so 40 decodes on 2 threads would move it by 40 at least.
  const lastId = () => Number(readFileSync("/proc/sys/kernel/ns_last_pid", "utf8"));
  context.clearAll();
  const prompt = Array.from(model.vocab.tokenize("Counting threads", { addSpecial: false }));
  let logits = feed(0, prompt, 0);
  const before = lastId();
  for (let i = 0; i < 40; i++) logits = feed(0, [argmax(logits)], prompt.length + i);
  // a little room for whatever else on the machine starts a process meanwhile
  expect(lastId() - before).toBeLessThan(20);
});

test("a context that shares another's worker threads starts none, and keeps them when the other is freed", () => {
  const threads = () => readdirSync("/proc/self/task").length;
  const owner = LlamaContext.create(model, { contextSize: 256, batchSize: 64, threads: 2 });
  const before = threads();
  const sharing = LlamaContext.create(model, { contextSize: 256, batchSize: 64, threads: 2, threadsOf: owner });
  expect(threads()).toBe(before);
  // the measure sees a pool's worker: a context with a pool of its own adds one
  const own = LlamaContext.create(model, { contextSize: 256, batchSize: 64, threads: 2 });
  expect(threads()).toBe(before + 1);
  own.dispose();
  const prompt = Array.from(model.vocab.tokenize("Shared workers", { addSpecial: false }));
  const decodeInto = (target: LlamaContext) => {
    batch.clear();
    prompt.forEach((token, i) => batch.add(token, i, 0, i === prompt.length - 1));
    return target.decode(batch);
  };
  expect(decodeInto(owner)).toBe(0);
  expect(decodeInto(sharing)).toBe(0);
  const logits = Array.from(sharing.logits(batch.count - 1).slice(0, 50));
  owner.dispose();
  sharing.clearAll();
  expect(decodeInto(sharing)).toBe(0);
  expect(Array.from(sharing.logits(batch.count - 1).slice(0, 50))).toEqual(logits);
  sharing.dispose();
});
