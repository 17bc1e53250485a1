// vLLM's SamplingParams: the same field names, defaults and checks (with vLLM's wording) for vLLM's own
// fields, and every other parameter of the option table (typical_p, the XTC and DRY samplers, …) under
// its wire name, checked against the table's ranges.
import type { GenerateRequest } from "../engine/types.ts";
import { checkOption, OptionError } from "../options/check-value.ts";
import { engineSettings } from "../options/engine-settings.ts";
import { mergeOptionValues, type OptionValues } from "../options/values.ts";
import { readWireOptions, wireOptionNames, type WireOptions } from "../options/wire-names.ts";

/** vLLM's own fields, with its defaults. */
interface VllmFields {
  /** Completions sampled per prompt. @default 1 */
  n?: number;
  /** @default 0 (range -2 to 2) */
  presence_penalty?: number;
  /** @default 0 (range -2 to 2) */
  frequency_penalty?: number;
  /** Above 1 discourages repetition. @default 1 */
  repetition_penalty?: number;
  /** 0 is greedy. @default 1 */
  temperature?: number;
  /** @default 1 */
  top_p?: number;
  /** 0 or -1 disables. @default 0 */
  top_k?: number;
  /** @default 0 */
  min_p?: number;
  /** Unset (or -1): a random seed per call. */
  seed?: number | null;
  /** Text that ends generation (not part of the output unless include_stop_str_in_output). */
  stop?: string | string[] | null;
  stop_token_ids?: number[] | null;
  /** @default false */
  ignore_eos?: boolean;
  /** Most tokens to generate; null means until the context is full. @default 16 */
  max_tokens?: number | null;
  /** @default 0 */
  min_tokens?: number;
  /** @default false */
  include_stop_str_in_output?: boolean;
  /** Leave special tokens (such as "<|im_end|>") out of the text. @default true */
  skip_special_tokens?: boolean;
  /** Token id to bias (-100 to 100). */
  logit_bias?: Record<number, number> | null;
  /** A GBNF grammar the output must follow (llamux's addition; vLLM has structured_outputs). */
  grammar?: string | null;
  /**
   * With speculative decoding (LLM speculative_config): most draft tokens per step for this request, 0 for
   * none (llamux's addition). Default: the LLM's num_speculative_tokens.
   */
  num_speculative_tokens?: number | null;
}

export type SamplingParamsInit = VllmFields & Omit<WireOptions, keyof VllmFields>;

/** vLLM's fields the class checks itself; every other wire name is checked by the table. */
const VLLM_FIELDS = new Set<string>([
  "n", "presence_penalty", "frequency_penalty", "repetition_penalty", "temperature", "top_p", "top_k", "min_p", "seed", "stop", "stop_token_ids",
  "ignore_eos", "max_tokens", "min_tokens", "include_stop_str_in_output", "skip_special_tokens", "logit_bias", "grammar", "num_speculative_tokens",
]);

/** Sampling settings that follow vLLM's defaults and reject what vLLM rejects, with its wording. */
export class SamplingParams {
  readonly n: number;
  readonly presence_penalty: number;
  readonly frequency_penalty: number;
  readonly repetition_penalty: number;
  readonly temperature: number;
  readonly top_p: number;
  readonly top_k: number;
  readonly min_p: number;
  readonly seed: number | null;
  readonly stop: string[];
  readonly stop_token_ids: number[];
  readonly ignore_eos: boolean;
  readonly max_tokens: number | null;
  readonly min_tokens: number;
  readonly include_stop_str_in_output: boolean;
  readonly skip_special_tokens: boolean;
  readonly logit_bias: Record<number, number> | null;
  readonly grammar: string | null;
  readonly num_speculative_tokens: number | null;
  /** The option table's other parameters this object sets, under their wire names. */
  readonly extra: Readonly<Record<string, unknown>>;

  constructor(init: SamplingParamsInit = {}) {
    this.n = init.n ?? 1;
    this.presence_penalty = init.presence_penalty ?? 0;
    this.frequency_penalty = init.frequency_penalty ?? 0;
    this.repetition_penalty = init.repetition_penalty ?? 1;
    // vLLM raises a tiny temperature to 0.01 to avoid numeric trouble.
    const temperature = init.temperature ?? 1;
    this.temperature = temperature > 0 && temperature < 0.01 ? 0.01 : temperature;
    this.top_p = init.top_p ?? 1;
    this.top_k = init.top_k ?? 0;
    this.min_p = init.min_p ?? 0;
    this.seed = init.seed == null || init.seed === -1 ? null : init.seed;
    this.stop = init.stop == null ? [] : typeof init.stop === "string" ? [init.stop] : [...init.stop];
    this.stop_token_ids = init.stop_token_ids ? [...init.stop_token_ids] : [];
    this.ignore_eos = init.ignore_eos ?? false;
    this.max_tokens = init.max_tokens === undefined ? 16 : init.max_tokens;
    this.min_tokens = init.min_tokens ?? 0;
    this.include_stop_str_in_output = init.include_stop_str_in_output ?? false;
    this.skip_special_tokens = init.skip_special_tokens ?? true;
    this.logit_bias = init.logit_bias ?? null;
    this.grammar = init.grammar ?? null;
    this.num_speculative_tokens = init.num_speculative_tokens ?? null;
    this.extra = extraFields(init as Record<string, unknown>);
    this.verify();
  }

  private verify(): void {
    const check = (ok: boolean, message: string) => {
      if (!ok) throw new RangeError(message);
    };
    check(Number.isInteger(this.n) && this.n >= 1, `n must be at least 1, got ${this.n}.`);
    check(this.presence_penalty >= -2 && this.presence_penalty <= 2, `presence_penalty must be in [-2, 2], got ${this.presence_penalty}.`);
    check(this.frequency_penalty >= -2 && this.frequency_penalty <= 2, `frequency_penalty must be in [-2, 2], got ${this.frequency_penalty}.`);
    check(this.repetition_penalty > 0, `repetition_penalty must be greater than zero, got ${this.repetition_penalty}.`);
    check(this.temperature >= 0, `temperature must be non-negative, got ${this.temperature}.`);
    check(this.top_p > 0 && this.top_p <= 1, `top_p must be in (0, 1], got ${this.top_p}.`);
    check(Number.isInteger(this.top_k) && this.top_k >= -1, `top_k must be 0 (disable), or at least 1, got ${this.top_k}.`);
    check(this.min_p >= 0 && this.min_p <= 1, `min_p must be in [0, 1], got ${this.min_p}.`);
    check(this.max_tokens === null || (Number.isInteger(this.max_tokens) && this.max_tokens >= 1), `max_tokens must be at least 1, got ${this.max_tokens}.`);
    check(Number.isInteger(this.min_tokens) && this.min_tokens >= 0, `min_tokens must be greater than or equal to 0, got ${this.min_tokens}.`);
    check(this.max_tokens === null || this.min_tokens <= this.max_tokens, `min_tokens must be less than or equal to max_tokens=${this.max_tokens}, got ${this.min_tokens}.`);
    check(!this.stop.some((s) => s === ""), "stop cannot contain an empty string.");
    check(this.num_speculative_tokens === null || (Number.isInteger(this.num_speculative_tokens) && this.num_speculative_tokens >= 0),
      `num_speculative_tokens must be a non-negative integer, got ${this.num_speculative_tokens}.`);
    check(this.temperature > 0 || this.n === 1, `n must be 1 when using greedy sampling, got ${this.n}.`);
  }

  /** The parameters as the option table names them (max_tokens aside: it is the reply's limit). */
  optionValues(): OptionValues {
    const values = readWireOptions({
      ...this.extra,
      temperature: this.temperature, top_p: this.top_p, top_k: this.top_k, min_p: this.min_p, typical_p: this.extra.typical_p ?? 1,
      repetition_penalty: this.repetition_penalty, presence_penalty: this.presence_penalty, frequency_penalty: this.frequency_penalty,
      seed: this.seed ?? -1, logit_bias: this.logit_bias, stop_token_ids: this.stop_token_ids, ignore_eos: this.ignore_eos,
      min_tokens: this.min_tokens, include_stop_str_in_output: this.include_stop_str_in_output, skip_special_tokens: this.skip_special_tokens,
    }, ["repetition_penalty"]);
    return mergeOptionValues(values, { stop: this.stop }, this.num_speculative_tokens !== null ? { draftTokens: this.num_speculative_tokens } : {});
  }

  /** The engine request for one prompt (without the prompt); the seed is drawn here when unset. */
  toRequest(): Omit<GenerateRequest, "id" | "prompt"> {
    const { sampling, generation } = engineSettings(this.optionValues());
    if (this.grammar) sampling.grammar = this.grammar;
    return {
      ...generation, stop: this.stop, includeStopString: this.include_stop_str_in_output, ignoreEos: this.ignore_eos, sampling,
      ...(this.max_tokens !== null ? { maxTokens: this.max_tokens } : {}),
    };
  }
}

/** The table's parameters beyond vLLM's own fields, checked against the table (vLLM-style wording). */
function extraFields(init: Record<string, unknown>): Record<string, unknown> {
  const extra: Record<string, unknown> = {};
  for (const { key, name } of wireOptionNames()) {
    const value = init[name];
    if (VLLM_FIELDS.has(name) || value === undefined || value === null) continue;
    try {
      extra[name] = checkOption(key, value, name);
    } catch (error) {
      if (error instanceof OptionError) throw new RangeError(`${name} must be ${error.rule}, got ${JSON.stringify(value)}.`);
      throw error;
    }
  }
  return extra;
}
