// LM Studio's spellings of the option table: the fields of /api/v1/chat, and the SDK's prediction config
// keys ("llm.prediction.temperature", "llm.prediction.topPSampling" as {checked, value}, …).
import { z } from "zod";
import { checkOption, OptionError } from "./check-value.ts";
import { OPTIONS, type OptionKey, type OptionRow } from "./table.ts";
import type { OptionValues } from "./values.ts";

const PREDICTION_PREFIX = "llm.prediction.";

const ROWS = Object.entries(OPTIONS) as Array<[OptionKey, OptionRow]>;

/** The zod fields /api/v1/chat takes from the table (ranges included). */
export function lmStudioRestFields(): Record<string, z.ZodType> {
  const fields: Record<string, z.ZodType> = {};
  for (const [key, row] of ROWS) {
    if (!row.lmstudioRest) continue;
    let schema = row.kind === "int" ? z.number().int() : z.number();
    if (row.range?.min !== undefined) schema = row.range.aboveMin ? schema.gt(row.range.min) : schema.min(row.range.min);
    if (row.range?.max !== undefined) schema = schema.max(row.range.max);
    // The reply's limit is at least one token on this API.
    if (key === "maxTokens") schema = schema.min(1);
    fields[row.lmstudioRest] = schema.optional().describe(row.description);
  }
  return fields;
}

export function readLmStudioRest(body: Record<string, unknown>): OptionValues {
  const values: Record<string, unknown> = {};
  for (const [key, row] of ROWS) if (row.lmstudioRest && body[row.lmstudioRest] !== undefined) values[key] = body[row.lmstudioRest];
  return values as OptionValues;
}

/**
 * The options a collapsed prediction config sets. A checkbox value that is unchecked leaves its option
 * unset; a negative seed (LM Studio's "random") too. A value of the wrong shape is an error naming the key.
 */
export function readLmStudioKeys(config: ReadonlyMap<string, unknown>): OptionValues {
  const values: Record<string, unknown> = {};
  for (const [key, row] of ROWS) {
    if (!row.lmstudioKey) continue;
    const name = PREDICTION_PREFIX + row.lmstudioKey.key;
    if (!config.has(name)) continue;
    let value = config.get(name);
    if (row.lmstudioKey.checkbox) {
      const box = value as { checked?: unknown; value?: unknown } | null;
      if (typeof box !== "object" || box === null || typeof box.checked !== "boolean") {
        throw new OptionError(name, "{checked: boolean, value}", `Invalid value for config key "${name}": expected {checked, value}`);
      }
      if (!box.checked) continue;
      value = box.value;
    }
    try {
      values[key] = checkOption(key, value, name);
    } catch (error) {
      if (error instanceof OptionError) throw new OptionError(name, error.rule, `Invalid value for config key "${name}": expected ${error.rule}`);
      throw error;
    }
  }
  if (typeof values.seed === "number" && values.seed < 0) delete values.seed;
  return values as OptionValues;
}

/** Option values as LM Studio's config fields, as a prediction's `success` reports what it used. */
export function toLmStudioFields(values: OptionValues): Array<{ key: string; value: unknown }> {
  const fields: Array<{ key: string; value: unknown }> = [];
  for (const [key, row] of ROWS) {
    const value = values[key];
    if (!row.lmstudioKey || value === undefined) continue;
    fields.push({ key: PREDICTION_PREFIX + row.lmstudioKey.key, value: row.lmstudioKey.checkbox ? { checked: true, value } : value });
  }
  return fields;
}
