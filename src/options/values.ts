// Parameter values as the option table names them, read from any surface and merged in layers (the
// profile's or API's defaults, then the model's own, then the request's) before they become engine settings.
import { OPTIONS, type OptionKey, type OptionKind } from "./table.ts";

type ValueOfKind<K extends OptionKind> =
  K extends "int" | "float" ? number : K extends "bool" ? boolean : K extends "strings" ? string[] : K extends "ints" ? number[] : Record<string, number>;

export type OptionValue<K extends OptionKey> = ValueOfKind<(typeof OPTIONS)[K]["kind"]>;

/** Values by option key; an unset key is undefined. */
export type OptionValues = { -readonly [K in OptionKey]?: OptionValue<K> };

/** Later layers win, key by key; undefined leaves the earlier value. */
export function mergeOptionValues(...layers: Array<OptionValues | undefined>): OptionValues {
  const merged: Record<string, unknown> = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer ?? {})) if (value !== undefined) merged[key] = value;
  }
  return merged as OptionValues;
}

/**
 * Ollama's defaults (api.DefaultOptions), the lowest layer of /api/* requests. Load options are left out:
 * their defaults are the server's (--ctx-size, OLLAMA_CONTEXT_LENGTH, …), so that a request that sets
 * none shares the engine every other route uses.
 */
export function ollamaDefaults(): OptionValues {
  const values: Record<string, unknown> = {};
  for (const [key, row] of Object.entries(OPTIONS)) if ("ollamaDefault" in row && !("load" in row.engine)) values[key] = row.ollamaDefault;
  return values as OptionValues;
}
