// Ollama's spelling of the option table: the `options` map of /api/* requests (and of /v1 bodies on
// profile a) and Modelfile PARAMETER lines. Unknown and removed names are ignored with a warning, as
// Ollama does; a known name with a value of the wrong type is an error naming it.
import { logger } from "../log.ts";
import { checkKind, checkOption, OptionError, rangeWords } from "./check-value.ts";
import { OPTIONS, REMOVED_OLLAMA_OPTIONS, type OptionKey, type OptionKind } from "./table.ts";
import type { OptionValues } from "./values.ts";

const log = logger("options");

const KEY_BY_OLLAMA_NAME: ReadonlyMap<string, OptionKey> = new Map(
  (Object.entries(OPTIONS) as Array<[OptionKey, (typeof OPTIONS)[OptionKey]]>).flatMap(([key, row]) => ("ollama" in row ? [[row.ollama, key]] : [])),
);

/** Ollama's word for a kind, as its errors say it ("must be of type integer"). */
const OLLAMA_KIND_WORDS: Record<OptionKind, string> = { int: "integer", float: "float", bool: "boolean", strings: "array of strings", ints: "array of integers", bias: "object" };

export function ollamaOptionKey(name: string): OptionKey | undefined {
  return KEY_BY_OLLAMA_NAME.get(name);
}

/** Every Ollama option name, in table order. */
export function ollamaOptionNames(): string[] {
  return [...KEY_BY_OLLAMA_NAME.keys()];
}

export function ollamaKindOf(name: string): OptionKind | undefined {
  const key = ollamaOptionKey(name);
  return key ? OPTIONS[key].kind : undefined;
}

export function isRemovedOllamaOption(name: string): boolean {
  return REMOVED_OLLAMA_OPTIONS.has(name);
}

/** One value of an Ollama option, checked; throws OptionError in Ollama's words. */
export function checkOllamaOption(name: string, value: unknown, field = `options.${name}`): unknown {
  const key = ollamaOptionKey(name);
  if (!key) throw new OptionError(field, "a known option", `unknown option "${name}"`);
  const row = OPTIONS[key];
  const typeOnly = "typeOnlyInOllama" in row;
  try {
    return checkOption(key, value, field, { typeOnly, truncate: true });
  } catch (error) {
    if (!(error instanceof OptionError)) throw error;
    // Right type, out of range: say the range; else say the type, as Ollama does.
    const range = "range" in row && !typeOnly ? rangeWords(row.range, row.kind) : "";
    const message = range && checkKind(key, value)
      ? `option "${name}" must be ${range}, got ${JSON.stringify(value)}`
      : `option "${name}" must be of type ${OLLAMA_KIND_WORDS[row.kind]}`;
    throw new OptionError(field, error.rule, message);
  }
}

/**
 * The known options of an `options` map (or a model's parameters layer) as option values. Null values are
 * unset; unknown and removed names are warned about and ignored.
 */
export function readOllamaOptions(raw: Record<string, unknown> | null | undefined, fieldPrefix = "options"): OptionValues {
  const values: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw ?? {})) {
    if (value === null || value === undefined) continue;
    const key = ollamaOptionKey(name);
    if (!key) {
      log.warn(isRemovedOllamaOption(name) ? `option "${name}" is no longer supported by Ollama; ignored` : `invalid option provided: "${name}"; ignored`);
      continue;
    }
    values[key] = checkOllamaOption(name, value, `${fieldPrefix}.${name}`);
  }
  return values as OptionValues;
}
