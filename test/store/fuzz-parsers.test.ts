// Property-based fuzzing (fast-check) of the parsers that read what users and hubs send: Modelfile
// text and GGUF headers. Whatever the input, each either parses or throws its own syntax error (never
// another exception, which would be a 500), and within a time bound.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { ensureModel } from "../../scripts/gen-models.ts";
import { GgufReadError, parseGgufHeader } from "../../src/store/gguf.ts";
import { modelDefinition, ModelfileSyntaxError, parseModelfile } from "../../src/store/modelfile/index.ts";

const RUNS = Number(process.env.FUZZ_RUNS ?? 400);

/** Runs `parse`, which may only throw `expected`, and checks it took less than `ms`. */
function parsesOrRefuses(parse: () => unknown, expected: new (...args: never[]) => Error, ms: number): void {
  const started = performance.now();
  try {
    parse();
  } catch (error) {
    if (!(error instanceof expected)) throw new Error(`threw ${(error as Error).name}: ${(error as Error).message}`, { cause: error });
  }
  expect(performance.now() - started).toBeLessThan(ms);
}

describe("Modelfile parser", () => {
  const word = fc.constantFrom(
    "FROM", "from", "PARAMETER", "TEMPLATE", "SYSTEM", "MESSAGE", "ADAPTER", "LICENSE", "REQUIRES", "DRAFT", "RENDERER", "PARSER",
    "temperature", "num_ctx", "stop", "top_k", "user", "assistant", "system", "#", '"', '"""', " ", "\t", "\n", "\r\n", "\uFEFF",
    "llama3", "./model.gguf", "@sha256:" + "a".repeat(64), "0.5", "-1", "1e309", "{{ .Prompt }}", "\\", "\u0000", "é",
  );
  const modelfileLike = fc.array(fc.oneof({ weight: 4, arbitrary: word }, { weight: 1, arbitrary: fc.string({ maxLength: 20 }) }), { maxLength: 60 }).map((parts) => parts.join(""));

  test("any text parses or is a ModelfileSyntaxError, quickly", () => {
    fc.assert(fc.property(fc.oneof(fc.string({ maxLength: 500 }), modelfileLike), (text) => {
      parsesOrRefuses(() => modelDefinition(parseModelfile(text)), ModelfileSyntaxError, 200);
    }), { numRuns: RUNS });
  });

  test("large values built from hostile pieces stay linear", () => {
    fc.assert(fc.property(fc.constantFrom('"', '"""'), fc.array(fc.constantFrom("a", '"', " ", "\n", '""', "x\""), { minLength: 1, maxLength: 8 }), (quote, pieces) => {
      const text = `FROM m\nSYSTEM ${quote}${pieces.join("").repeat(20_000)}\n`;
      parsesOrRefuses(() => parseModelfile(text), ModelfileSyntaxError, 1_000);
    }), { numRuns: 30 });
  });
});

describe("GGUF header parser", () => {
  test("truncated, bit-flipped and spliced headers parse or are a GgufReadError, quickly", async () => {
    const model = new Uint8Array(readFileSync(await ensureModel("tiny-llama")));
    const header = model.subarray(0, 64 * 1024);
    const mutation = fc.oneof(
      fc.integer({ min: 0, max: header.length }).map((length) => header.slice(0, length)),
      fc.array(fc.record({ at: fc.nat({ max: header.length - 1 }), byte: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 16 }).map((edits) => {
        const copy = header.slice();
        for (const { at, byte } of edits) copy[at] = byte;
        return copy;
      }),
      // Lengths and counts are 64-bit little-endian: huge values at the places they sit near the start.
      fc.record({ at: fc.integer({ min: 4, max: 512 }), value: fc.bigUint64Array({ minLength: 1, maxLength: 1 }) }).map(({ at, value }) => {
        const copy = header.slice();
        new DataView(copy.buffer).setBigUint64(Math.min(at, copy.length - 8), value[0]!, true);
        return copy;
      }),
      fc.uint8Array({ maxLength: 512 }).map((tail) => new Uint8Array([...header.subarray(0, 8), ...tail])),
    );
    fc.assert(fc.property(mutation, (bytes) => {
      parsesOrRefuses(() => parseGgufHeader(bytes, "fuzzed", { maxArrayLength: 0 }), GgufReadError, 500);
    }), { numRuns: RUNS });
  });
});
