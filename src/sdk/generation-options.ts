// Options of one generateResponse call (the spec's GenerationOptions): sampling, the reader of the
// model's function calls, and whether the model must call one.
import { TOOL_CALL_FORMATS, type ToolCallFormat } from "../chat/tool-calls/formats.ts";
import { readSdkOptions, type SdkOptions } from "../options/sdk-names.ts";
import type { OptionValues } from "../options/values.ts";

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

/**
 * The sampling parameters (temperature, topP, topK, minP, repetitionPenalty, presencePenalty,
 * frequencyPenalty, seed, maxTokens, the XTC and DRY samplers, …) are the option table's SDK names
 * (src/options/table.ts), checked against its ranges.
 */
export interface GenerationOptionsInit extends SdkOptions {
  /** Default: a DefaultFunctionCallParser; null turns parsing off (call text arrives as Chunks). */
  functionCallParser?: FunctionCallParser | null;
  /** @default "auto" */
  toolChoice?: ToolChoice;
  /** More than one call in a reply (OpenAI's parallel_tool_calls); false keeps the first. @default true */
  parallelToolCalls?: boolean;
}

// The option table's parameters are fields of GenerationOptions too (declaration merging).
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface GenerationOptions extends SdkOptions {}

export class GenerationOptions implements GenerationOptionsInit {
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

  /** The parameters these options set, as the option table names them. */
  optionValues(): OptionValues {
    return readSdkOptions(this as unknown as Record<string, unknown>);
  }
}

function checkOptions(o: GenerationOptions): void {
  o.optionValues();
  // maxTokens is the reply's limit: a positive whole number (Ollama's -1 has no meaning here).
  if (o.maxTokens !== undefined && (!Number.isInteger(o.maxTokens) || o.maxTokens < 1)) {
    throw new RangeError(`Cannot use maxTokens ${o.maxTokens}: it must be a whole number, 1 or more`);
  }
  const choice = o.toolChoice;
  const named = typeof choice === "object" && choice !== null && typeof choice.name === "string";
  if (!named && !["auto", "none", "required"].includes(choice as string)) {
    throw new TypeError(`Cannot use toolChoice ${JSON.stringify(choice)}: it must be "auto", "none", "required" or { name }`);
  }
  if (o.functionCallParser !== null && typeof o.functionCallParser?.format?.start !== "string") {
    throw new TypeError("Cannot use functionCallParser: give a DefaultFunctionCallParser, an AlternateFunctionCallParser, or null");
  }
}
