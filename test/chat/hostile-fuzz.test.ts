// Property-based fuzzing (fast-check) of the parsers that take untrusted text: GBNF grammars (our bounds,
// then llama.cpp's own parser on a real vocabulary), JSON schema → grammar, regex → grammar, Go templates
// and Jinja chat templates. Inputs are built from each language's own pieces so that they reach deep
// into the parsers. Every run must end, quickly, in a result or in the parser's own error type: no
// crash, no hang, no stray TypeError or stack overflow. Each property is bounded in time.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { LlamaModel, SamplerChain, defaultSamplerSettings } from "../../ffi/llama.ts";
import { InvalidGrammarError } from "../../ffi/sampler.ts";
import { checkGrammarBounds } from "../../src/chat/structured/grammar-bounds.ts";
import { constraintGrammar, StructuredOutputError } from "../../src/chat/structured/index.ts";
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

const schemaArbitrary = fc.letrec<{ schema: unknown }>((tie) => ({
  schema: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.jsonValue({ maxDepth: 2 }),
    fc.record({
      type: fc.constantFrom("object", "array", "string", "integer", "number", "boolean", "null", ["string", "null"], "nonsense"),
    }, { requiredKeys: [] }),
    fc.record({
      type: fc.constant("object"),
      properties: fc.dictionary(fc.string({ maxLength: 4 }), tie("schema"), { maxKeys: 3 }),
      required: fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }),
      additionalProperties: fc.oneof(fc.boolean(), tie("schema")),
    }, { requiredKeys: ["type"] }),
    fc.record({
      type: fc.constant("array"), items: tie("schema"),
      minItems: fc.oneof(fc.nat(5), fc.integer()), maxItems: fc.oneof(fc.nat(8), fc.integer(), fc.constant(1e9)),
    }, { requiredKeys: ["type"] }),
    fc.record({
      type: fc.constant("string"), minLength: fc.oneof(fc.nat(5), fc.double()), maxLength: fc.oneof(fc.nat(20), fc.constant(1e9)),
      pattern: fc.string({ maxLength: 8 }), format: fc.constantFrom("date", "time", "date-time", "uuid", "email", "nonsense"),
    }, { requiredKeys: [] }),
    fc.record({
      type: fc.constantFrom("integer", "number"), minimum: fc.oneof(fc.integer(), fc.double()), maximum: fc.oneof(fc.integer(), fc.double()),
      exclusiveMinimum: fc.integer(), exclusiveMaximum: fc.integer(),
    }, { requiredKeys: ["type"] }),
    fc.record({ enum: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 6 }) }),
    fc.record({ const: fc.jsonValue({ maxDepth: 1 }) }),
    fc.record({ anyOf: fc.array(tie("schema"), { maxLength: 3 }) }),
    fc.record({ oneOf: fc.array(tie("schema"), { maxLength: 3 }) }),
    fc.record({ $ref: fc.constantFrom("#", "#/$defs/a", "#/definitions/b", "#/nope", "http://x"), $defs: fc.record({ a: tie("schema") }) }, { requiredKeys: ["$ref"] }),
  ),
})).schema;

describe("JSON schema and regex to grammar", () => {
  test("any schema-shaped value becomes a bounded grammar or a StructuredOutputError", () => {
    fc.assert(fc.property(schemaArbitrary, (schema) => {
      endsWell(() => checkGrammarBounds(constraintGrammar({ type: "json_schema", schema })), [StructuredOutputError]);
    }), settings(3000));
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
