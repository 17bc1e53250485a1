// Options of one generateResponse call (the spec's GenerationOptions): sampling, the reader of the
// model's function calls, and whether the model must call one.
import { TOOL_CALL_FORMATS, type ToolCallFormat } from "../chat/tool-calls/formats.ts";

/** Reads calls out of the model's text. */
export interface FunctionCallParser {
  readonly format: ToolCallFormat;
}

/** Pythonic calls between `<|tool_call_start|>` and `<|tool_call_end|>` (LFM2's syntax). */
export class DefaultFunctionCallParser implements FunctionCallParser {
  readonly format = TOOL_CALL_FORMATS.lfm2;
}

/** JSON calls in `<tool_call>…</tool_call>` tags (Hermes, Qwen and other families). */
export class AlternateFunctionCallParser implements FunctionCallParser {
  readonly format = TOOL_CALL_FORMATS.hermes;
}

/**
 * "auto": the model decides; "none": no calls (not parsed either); "required": at least one call;
 * `{ name }`: exactly one call of that function. Required and named choices are enforced with a grammar
 * in the model's own call syntax.
 */
export type ToolChoice = "auto" | "none" | "required" | { name: string };

export interface GenerationOptionsInit {
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  repetitionPenalty?: number;
  /** Most tokens to generate; unset means until the model stops or the context is full. */
  maxTokens?: number;
  seed?: number;
  /** Default: a DefaultFunctionCallParser; null turns parsing off (call text arrives as Chunks). */
  functionCallParser?: FunctionCallParser | null;
  /** @default "auto" */
  toolChoice?: ToolChoice;
  /** More than one call in a reply (OpenAI's parallel_tool_calls); false keeps the first. @default true */
  parallelToolCalls?: boolean;
}

export class GenerationOptions implements GenerationOptionsInit {
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  repetitionPenalty?: number;
  maxTokens?: number;
  seed?: number;
  functionCallParser: FunctionCallParser | null = new DefaultFunctionCallParser();
  toolChoice: ToolChoice = "auto";
  parallelToolCalls = true;

  constructor(init: GenerationOptionsInit = {}) {
    Object.assign(this, Object.fromEntries(Object.entries(init).filter(([, value]) => value !== undefined)));
    checkOptions(this);
  }

  /** `GenerationOptions.build({ temperature: 0.3 })` or, as Kotlin's builder, `build((o) => { o.temperature = 0.3 })`. */
  static build(init: GenerationOptionsInit | ((options: GenerationOptions) => void) = {}): GenerationOptions {
    if (typeof init !== "function") return new GenerationOptions(init);
    const options = new GenerationOptions();
    init(options);
    checkOptions(options);
    return options;
  }

  /** Options as given: a GenerationOptions, a plain object, or nothing. */
  static from(options: GenerationOptions | GenerationOptionsInit | undefined): GenerationOptions {
    return options instanceof GenerationOptions ? options : new GenerationOptions(options ?? {});
  }
}

function checkOptions(o: GenerationOptions): void {
  const range = (name: string, value: number | undefined, ok: (v: number) => boolean, rule: string) => {
    if (value !== undefined && (typeof value !== "number" || !ok(value))) throw new RangeError(`Cannot use ${name} ${value}: ${rule}`);
  };
  range("temperature", o.temperature, (v) => v >= 0, "it must be 0 or more");
  range("topP", o.topP, (v) => v > 0 && v <= 1, "it must be in (0, 1]");
  range("topK", o.topK, (v) => Number.isInteger(v) && v >= 0, "it must be a whole number, 0 or more");
  range("minP", o.minP, (v) => v >= 0 && v <= 1, "it must be in [0, 1]");
  range("repetitionPenalty", o.repetitionPenalty, (v) => v > 0, "it must be more than 0");
  range("maxTokens", o.maxTokens, (v) => Number.isInteger(v) && v >= 1, "it must be a whole number, 1 or more");
  const choice = o.toolChoice;
  const named = typeof choice === "object" && choice !== null && typeof choice.name === "string";
  if (!named && !["auto", "none", "required"].includes(choice as string)) {
    throw new TypeError(`Cannot use toolChoice ${JSON.stringify(choice)}: it must be "auto", "none", "required" or { name }`);
  }
  if (o.functionCallParser !== null && typeof o.functionCallParser?.format?.start !== "string") {
    throw new TypeError("Cannot use functionCallParser: give a DefaultFunctionCallParser, an AlternateFunctionCallParser, or null");
  }
}
