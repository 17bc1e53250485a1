// The Modelfile parser, its folding into a model definition, and the formatter's round trip.
import { describe, expect, test } from "bun:test";
import {
  ModelfileSyntaxError,
  PARAMETER_TYPES,
  formatModelfile,
  modelDefinition,
  parameterProblems,
  parseModelfile,
  quoteValue,
} from "../../src/store/modelfile/index.ts";
import { SPEC_TEMPLATE, specModelfile } from "../fixtures/spec-modelfile.ts";

const definitionOf = (text: string) => modelDefinition(parseModelfile(text));

function syntaxError(text: string): ModelfileSyntaxError {
  try {
    parseModelfile(text);
  } catch (error) {
    expect(error).toBeInstanceOf(ModelfileSyntaxError);
    expect(error).toBeInstanceOf(SyntaxError);
    return error as ModelfileSyntaxError;
  }
  throw new Error("expected a syntax error");
}

describe("parseModelfile", () => {
  test("reads the spec's example into a definition", () => {
    const definition = definitionOf(specModelfile("./model.gguf"));
    expect(definition.from).toEqual(["./model.gguf"]);
    expect(definition.template).toBe(SPEC_TEMPLATE);
    expect(definition.parameters).toEqual({ temperature: 0.3, top_k: 40, repeat_penalty: 1.05, stop: ["<|im_end|>", "<|endoftext|>"] });
  });

  test("reads every instruction, case-insensitively, with the line each starts on", () => {
    const { commands } = parseModelfile(
      [
        "# a comment",
        "from llama3.2",
        "From ./mmproj.gguf",
        "Adapter ./lora.gguf",
        "SYSTEM You are terse.",
        'template "{{ .Prompt }}"',
        "PARAMETER num_ctx 8192",
        "MESSAGE user Is the sky blue?",
        "message assistant Yes.",
        'LICENSE """MIT',
        'second line"""',
        "LICENSE Apache-2.0",
        "REQUIRES v0.14.0",
      ].join("\n"),
    );
    expect(commands).toEqual([
      { kind: "from", value: "llama3.2", line: 2 },
      { kind: "from", value: "./mmproj.gguf", line: 3 },
      { kind: "adapter", value: "./lora.gguf", line: 4 },
      { kind: "system", value: "You are terse.", line: 5 },
      { kind: "template", value: "{{ .Prompt }}", line: 6 },
      { kind: "parameter", name: "num_ctx", value: 8192, line: 7 },
      { kind: "message", role: "user", content: "Is the sky blue?", line: 8 },
      { kind: "message", role: "assistant", content: "Yes.", line: 9 },
      { kind: "license", value: "MIT\nsecond line", line: 10 },
      { kind: "license", value: "Apache-2.0", line: 12 },
      { kind: "requires", value: "0.14.0", line: 13 },
    ]);
  });

  test("quoting forms: bare values end at the line end, quotes close only where a line ends with them", () => {
    const { commands } = parseModelfile(
      [
        "FROM   model.gguf   ",
        'SYSTEM "  keeps its spaces  "',
        'PARAMETER stop "say "hi""',
        'TEMPLATE """',
        "{{ .Prompt }}",
        '  """   ',
        'MESSAGE user "two',
        'lines"',
        'MESSAGE assistant ""',
        "PARAMETER stop a # not a comment",
      ].join("\n"),
    );
    expect(commands.map((c) => ("value" in c ? c.value : c.content))).toEqual([
      "model.gguf",
      "  keeps its spaces  ",
      ['say "hi"'],
      "\n{{ .Prompt }}\n  ",
      "two\nlines",
      "",
      ["a # not a comment"],
    ]);
  });

  test("typed parameters: every option of the table, and stop lines accumulate", () => {
    const samples = { int: "-3", float: "0.25", bool: "true", strings: "<|im_end|>", ints: "7", bias: "" } as const;
    // Parameters llamux added (XTC, DRY) are range-checked: -3 is no length and 0.25 no DRY base.
    const valid: Record<string, string> = { dry_allowed_length: "3", dry_penalty_last_n: "-1", dry_base: "1.5", num_ctx: "2048" };
    const text = ["FROM m", ...Object.entries(PARAMETER_TYPES).map(([name, type]) => `PARAMETER ${name} ${valid[name] ?? samples[type]}`), "PARAMETER stop </s>"].join("\n");
    const { parameters } = definitionOf(text);
    expect(Object.keys(parameters).sort()).toEqual(Object.keys(PARAMETER_TYPES).sort());
    expect(parameters.seed).toBe(-3);
    expect(parameters.temperature).toBe(0.25);
    expect(parameters.use_mmap).toBe(true);
    expect(parameters.stop).toEqual(["<|im_end|>", "</s>"]);
    expect(definitionOf("FROM m\nPARAMETER use_mmap F\nPARAMETER TOP_P 1e-1").parameters).toEqual({ use_mmap: false, top_p: 0.1 });
  });

  test("deprecated parameters are warnings, not values", () => {
    const modelfile = parseModelfile("FROM m\nPARAMETER mirostat 2\nPARAMETER penalize_newline true");
    expect(modelfile.commands).toHaveLength(1);
    expect(modelfile.warnings).toEqual([
      'parameter "mirostat" is deprecated and ignored (line 2)',
      'parameter "penalize_newline" is deprecated and ignored (line 3)',
    ]);
  });

  test("a BOM and CRLF line ends are read as plain text", () => {
    const definition = definitionOf('\uFEFFFROM m\r\nSYSTEM """a\r\nb"""\r\n');
    expect(definition.from).toEqual(["m"]);
    expect(definition.system).toBe("a\nb");
  });

  test("DRAFT names the draft model; RENDERER and PARSER are read and reported as unsupported", () => {
    expect(definitionOf("FROM m\nDRAFT ./draft.gguf").draft).toBe("./draft.gguf");
    expect(definitionOf("FROM m\nDRAFT ./draft.gguf").unsupported).toEqual([]);
    expect(definitionOf("FROM m\nRENDERER qwen3\nPARSER qwen3").unsupported).toEqual([
      { instruction: "RENDERER", line: 2 },
      { instruction: "PARSER", line: 3 },
    ]);
  });

  test("a long quoted value takes linear time: 200k lines in well under a second", () => {
    // Quadratic before: 100k lines took 5 s, 400k took three minutes.
    const lines = 200_000;
    for (const quote of ['"', '"""']) {
      const started = performance.now();
      const definition = definitionOf(`FROM m\nSYSTEM ${quote}${"a line with a \" quote  \n".repeat(lines)}${quote}\n`);
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(definition.system!.split("\n")).toHaveLength(lines + 1);
    }
    const started = performance.now();
    expect(() => parseModelfile(`FROM m\nSYSTEM """${"no end\n".repeat(lines)}`)).toThrow(/unterminated """ value/);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe("parseModelfile errors", () => {
  const cases: Array<[string, string, number, RegExp]> = [
    ["unknown parameter", "FROM m\n\nPARAMETER numa 1", 3, /unknown parameter "numa"/],
    ["wrong integer", "FROM m\nPARAMETER top_k forty", 2, /invalid integer value "forty" for parameter "top_k"/],
    ["wrong number", "FROM m\nPARAMETER temperature hot", 2, /invalid number value "hot"/],
    ["wrong boolean", "FROM m\nPARAMETER use_mmap yes", 2, /invalid boolean value "yes"/],
    ["unknown instruction", "FROM m\nMODEL x", 2, /unknown instruction "MODEL"/],
    ["punctuation in an instruction", "FROM: m", 1, /unknown instruction "FROM:"/],
    ["a line starting with a symbol", "FROM m\n= 3", 2, /a line must start with an instruction/],
    ["missing value", "FROM m\nSYSTEM\nPARAMETER top_k 1", 2, /missing value for SYSTEM/],
    ["missing parameter value", "FROM m\nPARAMETER top_k", 2, /missing value for parameter "top_k"/],
    ["bad message role", "FROM m\nMESSAGE tool hi", 2, /message role must be "system", "user" or "assistant", not "tool"/],
    ["upper-case role", "FROM m\nMESSAGE User hi", 2, /not "User"/],
    ["unterminated quote", 'FROM m\nSYSTEM """never closed\nmore', 2, /unterminated """ value/],
    ["bad version", "FROM m\nREQUIRES soon", 2, /REQUIRES needs a version/],
  ];
  for (const [name, text, line, message] of cases) {
    test(`${name}: line ${line}`, () => {
      const error = syntaxError(text);
      expect(error.line).toBe(line);
      expect(error.message).toMatch(message);
      expect(error.message).toContain(`at line ${line}`);
      expect(error.excerpt).toBe(text.split("\n")[line - 1]!.trim());
    });
  }

  test("a Modelfile without FROM is an error about the whole file", () => {
    const error = syntaxError("# nothing\nSYSTEM hi");
    expect(error.line).toBe(0);
    expect(error.message).toBe("Cannot parse Modelfile: no FROM instruction: a Modelfile must name its base model");
  });
});

describe("formatModelfile", () => {
  test("prints instructions in order and reads back to the same definition", () => {
    const content = {
      from: ["/blobs/sha256-1", "/blobs/sha256-2"],
      adapters: ["/blobs/sha256-3"],
      template: '{{ if .System }}"{{ .System }}"\n{{ end }}{{ .Prompt }}',
      system: "  padded  ",
      parameters: { temperature: 0.7, stop: ["<|im_end|>", " space", '"quoted"'], use_mmap: false },
      messages: [{ role: "user" as const, content: "hi\nthere" }],
      license: ["MIT"],
    };
    const text = formatModelfile(content);
    expect(text.split("\n").slice(0, 3)).toEqual(["FROM /blobs/sha256-1", "FROM /blobs/sha256-2", "ADAPTER /blobs/sha256-3"]);
    expect(text).toContain("PARAMETER stop <|im_end|>\n");
    const back = definitionOf(text);
    expect(back).toEqual({ ...content, license: ["MIT"], unsupported: [] });
  });

  test("quoteValue picks a form the parser reads back", () => {
    for (const value of ["plain", "", "a\nb", 'ends with "', '"starts', 'line one"\nline two', ' x """ y\nz']) {
      const text = `FROM m\nSYSTEM ${quoteValue(value)}\n`;
      expect(definitionOf(text).system).toBe(value);
    }
    expect(() => quoteValue('a"\nb"""\nc')).toThrow(RangeError);
  });
});

test("parameterProblems checks a parameters object against the table", () => {
  expect(parameterProblems({ temperature: 0.5, stop: ["x"], num_ctx: 4096 })).toEqual([]);
  expect(parameterProblems({ stop: "x", top_k: 1.5, tfs_z: 1 })).toEqual([
    'parameter "stop" must be of type array of strings',
    'parameter "top_k" must be of type int',
    'unknown parameter "tfs_z"',
  ]);
  // The range too, where a request's options are range-checked (XTC, DRY, num_ctx); Ollama's own sampling
  // options keep Ollama's type-only check.
  expect(parameterProblems({ xtc_probability: 2, dry_sequence_breakers: [], temperature: -1 })).toEqual([
    'parameter "xtc_probability" must be a number in [0, 1], got 2',
    'parameter "dry_sequence_breakers" must be an array of strings (1 to 32 entries, each 1 to 40 characters), got []',
  ]);
});
