// The llama.cpp source bundle ships reference tokenizations (models/ggml-vocab-*.gguf.inp/.out); they
// serve as an external suite for llamux's tokenize binding (same rules as tests/test-tokenizer-0.cpp).
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { LlamaModel } from "../../ffi/llama.ts";

const vocabDir = join(import.meta.dir, "..", "..", ".native", "llama.cpp", "models");

function readReferencePairs(vocabFile: string): Array<[string, number[]]> {
  const inputs = readFileSync(`${vocabFile}.inp`, "utf8");
  const outputs = readFileSync(`${vocabFile}.out`, "utf8").split("\n");
  const separator = "\n__ggml_vocab_test__\n";
  const texts: string[] = [];
  let pos = 0;
  while (pos < inputs.length) {
    const next = inputs.indexOf(separator, pos);
    if (next < 0) {
      texts.push(inputs.slice(pos));
      break;
    }
    texts.push(inputs.slice(pos, next));
    pos = next + separator.length;
  }
  return texts.map((text, i) => [text, outputs[i]!.trim().split(" ").filter(Boolean).map(Number)]);
}

const vocabFiles = readdirSync(vocabDir)
  .filter((f) => f.endsWith(".gguf") && existsSync(join(vocabDir, `${f}.inp`)) && existsSync(join(vocabDir, `${f}.out`)))
  .map((f) => join(vocabDir, f));

describe("tokenizer matches llama.cpp's reference pairs", () => {
  test("the source bundle has reference vocabularies", () => {
    expect(vocabFiles.length).toBeGreaterThan(10);
  });

  for (const file of vocabFiles) {
    test(file.split("/").pop()!, () => {
      const model = LlamaModel.load(file, { vocabOnly: true });
      try {
        const pairs = readReferencePairs(file);
        expect(pairs.length).toBeGreaterThan(10);
        for (const [text, expected] of pairs) {
          const actual = Array.from(model.vocab.tokenize(text, { addSpecial: false, parseSpecial: false }));
          expect({ text, tokens: actual }).toEqual({ text, tokens: expected });
        }
      } finally {
        model.dispose();
      }
    });
  }
});

test("special tokens are parsed only when asked", () => {
  const model = LlamaModel.load(join(vocabDir, "ggml-vocab-qwen2.gguf"), { vocabOnly: true });
  try {
    const parsed = model.vocab.tokenize("<|im_start|>user", { addSpecial: false, parseSpecial: true });
    const literal = model.vocab.tokenize("<|im_start|>user", { addSpecial: false, parseSpecial: false });
    expect(parsed.length).toBeLessThan(literal.length);
    expect(model.vocab.isControl(parsed[0]!)).toBe(true);
    expect(model.vocab.detokenize(parsed)).toBe("<|im_start|>user");
  } finally {
    model.dispose();
  }
});
