// Property-based fuzzing (fast-check) of the parsers that take untrusted text: GBNF grammars (our bounds,
// then llama.cpp's own parser on a real vocabulary), JSON schema → grammar, tool lists → call grammar,
// regex → grammar, Go templates and Jinja chat templates, and the media headers the server reads before
// anything decodes them (images, audio). Inputs are built from each language's own pieces so that they reach deep
// into the parsers. Every run must end, quickly, in a result or in the parser's own error type: no
// crash, no hang, no stray TypeError or stack overflow. Each property is bounded in time.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { LlamaModel, SamplerChain, defaultSamplerSettings } from "../../ffi/llama.ts";
import { InvalidGrammarError } from "../../ffi/sampler.ts";
import { checkGrammarBounds } from "../../src/chat/structured/grammar-bounds.ts";
import { constraintGrammar, StructuredOutputError, toolCallGrammar } from "../../src/chat/structured/index.ts";
import { TOOL_CALL_SYNTAXES } from "../../src/chat/tool-calls/formats.ts";
import type { ToolDefinition } from "../../src/chat/types.ts";
import { imageFromBase64, ImageInputError } from "../../src/vision/image-source.ts";
import { sniffImageFormat } from "../../src/vision/image-format.ts";
import { imageSize } from "../../src/vision/image-size.ts";
import { AudioInputError, audioFromBase64 } from "../../src/audio/audio-source.ts";
import { audioSeconds } from "../../src/audio/audio-duration.ts";
import { HOSTILE_AUDIO, HOSTILE_SCHEMAS, hostileImages, schemaArbitrary } from "../fixtures/hostile-inputs.ts";
import { join } from "node:path";
import { renderOllamaPrompt, TemplateExecutionError, TemplateLimitError, TemplateSyntaxError } from "../../src/chat/go-template/index.ts";
import { ChatTemplateError, renderChatTemplate } from "../../src/chat/template.ts";
import { ensureModel } from "../../scripts/gen-models.ts";

/** Each property runs at most this long (then stops early, passing what it ran). */
const TIME_LIMIT_MS = 4000;
/** One input may take at most this long: the bounds' own deadlines are 1 s. */
const PER_RUN_MS = 2500;
const settings = (numRuns: number) => ({ numRuns, plugins: [fc.interruptAfterTimeLimit(TIME_LIMIT_MS)] });

/** Text built from a language's pieces, with some raw characters mixed in. */
const piecesOf = (pieces: string[], maxLength = 60) =>
  fc.array(fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...pieces) }, { weight: 1, arbitrary: fc.string({ maxLength: 3 }) }), { maxLength }).map((parts) => parts.join(""));

/** Runs `work`; true when it returned, false when it threw one of `expected`; anything else fails the property. */
function endsWell(work: () => unknown, expected: Array<new (...args: never[]) => Error>): boolean {
  const started = performance.now();
  try {
    work();
    return true;
  } catch (error) {
    if (!expected.some((type) => error instanceof type)) throw error;
    return false;
  } finally {
    const elapsed = performance.now() - started;
    if (elapsed > PER_RUN_MS) throw new Error(`took ${Math.round(elapsed)} ms`);
  }
}

const GBNF_PIECES = [
  "root ::= ", "\nroot ::= ", "\nx ::= ", "x", "y", '"a"', '"\\""', '"\\x41"', '"\\u00e9"', "[a-z]", "[^\\n]", "[]", "(", ")", "|", "*", "+", "?",
  "{2}", "{0,3}", "{1,}", "{100000}", "{0,99999999}", ".", " ", "\n", "# c\n", "\\", '"', "[", "]", "<", ">", "<[1]>", "!", "{", "}", ",", "::=",
];

describe("GBNF grammars", () => {
  let model: LlamaModel;
  beforeAll(async () => {
    model = LlamaModel.load(await ensureModel("tiny-llama"), { gpuLayers: 0 });
  });
  afterAll(() => model?.dispose());

  test("our bounds, then llama.cpp's parser on a real vocabulary: a sampler or a grammar error, never a crash", () => {
    let accepted = 0;
    fc.assert(fc.property(piecesOf(GBNF_PIECES), (grammar) => {
      const bounded = endsWell(() => checkGrammarBounds(grammar), [StructuredOutputError]);
      if (!bounded) return;
      endsWell(() => {
        SamplerChain.create(model.vocab, model.trainedContextLength, { ...defaultSamplerSettings, grammar }).dispose();
        accepted++;
      }, [InvalidGrammarError]);
    }), settings(3000));
    // Guard against a generator that never reaches the parser's success path.
    expect(accepted).toBeGreaterThan(0);
  }, 30_000);

  test("raw grammar constraints: text or StructuredOutputError", () => {
    fc.assert(fc.property(fc.oneof(piecesOf(GBNF_PIECES, 200), fc.string({ maxLength: 300 })), (grammar) => {
      endsWell(() => constraintGrammar({ type: "grammar", grammar }), [StructuredOutputError]);
    }), settings(5000));
  }, 30_000);
});

/** Schema-shaped values of every kind, valid or not (the route fuzzing uses the same; the large ones there and in grammar-bounds.test.ts). */
const schemas = fc.oneof(schemaArbitrary, fc.constantFrom(...HOSTILE_SCHEMAS.filter(({ large }) => !large).map(({ schema }) => schema)));

describe("JSON schema and regex to grammar", () => {
  test("any schema-shaped value becomes a bounded grammar or a StructuredOutputError", () => {
    fc.assert(fc.property(schemas, (schema) => {
      endsWell(() => checkGrammarBounds(constraintGrammar({ type: "json_schema", schema })), [StructuredOutputError]);
    }), settings(3000));
  }, 30_000);

  test("any tool list (names and parameter schemas) becomes a bounded call grammar or a StructuredOutputError, in every syntax", () => {
    const name = fc.oneof(fc.constantFrom("get", "get_all", "set", "a.b", "f-1", "x"), fc.string({ maxLength: 12 }));
    const tools = fc.array(fc.record({ name, parameters: fc.oneof(schemas, fc.constant(undefined)) }), { minLength: 1, maxLength: 40 })
      .map((list) => ({
        tools: list.map(({ name: toolName, parameters }): ToolDefinition => ({ type: "function", function: { name: toolName, ...(parameters === undefined ? {} : { parameters: parameters as Record<string, unknown> }) } })),
        // fast-check prints a failing value: a schema 10,000 deep would overflow its printer.
        [fc.toStringMethod]: () => JSON.stringify(list).slice(0, 300),
      }));
    fc.assert(fc.property(tools, fc.constantFrom(...TOOL_CALL_SYNTAXES), fc.boolean(), ({ tools: list }, syntax, parallel) => {
      endsWell(() => checkGrammarBounds(toolCallGrammar({ tools: list, syntax, choice: "required", parallel })), [StructuredOutputError]);
    }), settings(2000));
  }, 30_000);

  const REGEX_PIECES = ["a", "b", ".", "*", "+", "?", "*?", "|", "(", ")", "(?:", "(?=", "[a-z]", "[^0-9]", "[", "]", "\\d", "\\w", "\\s", "\\", "{2}", "{1,3}", "{0,}", "{99999999}", "^", "$", "\\1", "-", "}", "{"];
  test("any regex becomes a bounded grammar or a StructuredOutputError", () => {
    fc.assert(fc.property(fc.oneof(piecesOf(REGEX_PIECES), fc.string({ maxLength: 30 })), (pattern) => {
      endsWell(() => checkGrammarBounds(constraintGrammar({ type: "regex", pattern })), [StructuredOutputError]);
    }), settings(5000));
  }, 30_000);

  test("any list of choices becomes a bounded grammar or a StructuredOutputError", () => {
    fc.assert(fc.property(fc.array(fc.string({ maxLength: 6 }), { maxLength: 50 }), (choices) => {
      endsWell(() => checkGrammarBounds(constraintGrammar({ type: "choice", choices })), [StructuredOutputError]);
    }), settings(3000));
  }, 30_000);
});

describe("templates", () => {
  const GO_PIECES = [
    "{{", "}}", "{{-", "-}}", " ", "range", "if", "else", "else if", "end", "with", "define \"a\"", "template \"a\"", "block \"b\" .", "break", "continue",
    ".", ".Messages", ".Prompt", ".System", ".Tools", ".Role", ".Content", "$", "$x", ":=", "=", "|", "(", ")", "\"s\"", "`raw`", "'c'", "1", "-3",
    "30000", "1e12", "nil", "true", "printf", "\"%d\"", "\"%0999999999d\"", "\"%.200f\"", "len", "index", "slice", "eq", "and", "or", "not", "print",
    "json", "html", "js", "call", "/*", "*/", ",", "\n",
  ];
  const data = { messages: [{ role: "user" as const, content: "hi {{ .Prompt }}" }, { role: "assistant" as const, content: "yo" }], system: "sys" };

  test("Go templates: a prompt or a template error, within the bounds", () => {
    fc.assert(fc.property(piecesOf(GO_PIECES, 40), (template) => {
      endsWell(() => renderOllamaPrompt(template, data), [TemplateSyntaxError, TemplateExecutionError, TemplateLimitError]);
    }), settings(8000));
  }, 30_000);

  const JINJA_PIECES = [
    "{{", "}}", "{%", "%}", "{%-", "-%}", "{#", "#}", " ", "for", "in", "endfor", "if", "elif", "else", "endif", "set", "macro", "endmacro", "call",
    "endcall", "filter", "endfilter", "break", "continue", "messages", "message", "m", "x", "ns", "namespace(a=1)", "loop.index", "range(", "30000000",
    "3000", ")", "(", "[", "]", ":", ",", "|", "tojson", "indent(", "1000000000", "length", "join", "upper", "trim", "replace(", "'a'", "\"b\"", "+",
    "*", "-", "//", "%", "~", "==", "and", "or", "not", "is", "defined", "none", "true", "raise_exception(", "strftime_now(", "'%Y'", ".content",
    "['role']", "add_generation_prompt", "bos_token", "tools", "=", "\n",
  ];
  test("Jinja chat templates: a prompt or a ChatTemplateError, within the bounds", () => {
    fc.assert(fc.property(piecesOf(JINJA_PIECES, 40), (template) => {
      endsWell(() => renderChatTemplate(template, data.messages, { bosToken: "<s>", eosToken: "</s>" }), [ChatTemplateError]);
    }), settings(8000));
  }, 30_000);
});

describe("media headers", () => {
  const images = hostileImages(join(import.meta.dir, "..", "fixtures", "images"));
  /** A hostile file with a few bytes changed, cut or extended. */
  const mutated = (files: Uint8Array[]) => fc.tuple(fc.constantFrom(...files), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }), fc.option(fc.nat()))
    .map(([bytes, changes, cut]) => {
      const copy = bytes.slice(0, cut === null ? bytes.length : cut % (bytes.length + 1));
      for (const [at, value] of changes) if (copy.length) copy[at % copy.length] = value;
      return copy;
    });

  test("images: the header reader gives a size or nothing, and reading from base64 a Uint8Array or an ImageInputError", () => {
    fc.assert(fc.property(mutated(images.map((image) => image.bytes)), (bytes) => {
      endsWell(() => {
        const format = sniffImageFormat(bytes);
        const size = format ? imageSize(bytes, format) : undefined;
        if (size && !(Number.isFinite(size.width) && Number.isFinite(size.height))) throw new Error(`size ${JSON.stringify(size)}`);
      }, []);
      endsWell(() => imageFromBase64(Buffer.from(bytes).toString("base64")), [ImageInputError]);
    }), settings(5000));
  }, 30_000);

  test("audio: the header reader gives a length or nothing, and reading from base64 a Uint8Array or an AudioInputError", () => {
    fc.assert(fc.property(mutated(HOSTILE_AUDIO.map((clip) => clip.bytes)), fc.constantFrom("wav", "mp3", "flac", "ogg", undefined), (bytes, format) => {
      endsWell(() => {
        const seconds = audioSeconds(bytes);
        if (seconds !== undefined && !(seconds >= 0)) throw new Error(`length ${seconds}`);
      }, []);
      endsWell(() => audioFromBase64(Buffer.from(bytes).toString("base64"), format), [AudioInputError]);
    }), settings(5000));
  }, 30_000);
});
