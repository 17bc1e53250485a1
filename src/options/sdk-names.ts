// The conversation SDK's spelling of the option table (GenerationOptions' camelCase names), checked with
// the table's ranges; the SDK sends them to a remote server under their wire names.
import { checkOption, OptionError } from "./check-value.ts";
import { OPTIONS, type OptionKey, type OptionRow } from "./table.ts";
import type { OptionValue, OptionValues } from "./values.ts";

type SdkName<K extends OptionKey> = (typeof OPTIONS)[K] extends { sdk: infer N extends string } ? N : never;

/** Every parameter the SDK takes, by its SDK name. */
export type SdkOptions = { [K in OptionKey as SdkName<K>]?: OptionValue<K> };

const SDK_ROWS = (Object.entries(OPTIONS) as Array<[OptionKey, OptionRow]>).filter(([, row]) => row.sdk !== undefined);

/** The options an SDK options object sets; a bad value is a RangeError naming the option and the rule. */
export function readSdkOptions(options: Record<string, unknown>): OptionValues {
  const values: Record<string, unknown> = {};
  for (const [key, row] of SDK_ROWS) {
    const value = options[row.sdk!];
    if (value === undefined) continue;
    try {
      values[key] = checkOption(key, value, row.sdk!);
    } catch (error) {
      if (error instanceof OptionError) throw new RangeError(`Cannot use ${row.sdk} ${JSON.stringify(value)}: it must be ${error.rule}`);
      throw error;
    }
  }
  return values as OptionValues;
}
