// The option table in OpenAI-style bodies: /v1 chat and text completions on every profile (the extra
// fields vLLM and llama-server take), the Responses and Messages APIs' extra fields, and vLLM's
// SamplingParams. The zod fields come from the table, so a new row is a new accepted field everywhere.
import { z } from "zod";
import { OPTIONS, type OptionKey, type OptionRow } from "./table.ts";
import type { OptionValue, OptionValues } from "./values.ts";

type WireRow = OptionRow & { wire: readonly string[] };

const WIRE_ROWS = (Object.entries(OPTIONS) as Array<[OptionKey, OptionRow]>).filter((entry): entry is [OptionKey, WireRow] => entry[1].wire !== undefined);

function numberSchema(row: OptionRow): z.ZodNumber {
  let schema = row.kind === "int" ? z.number().int() : z.number();
  const range = row.range;
  if (range?.min !== undefined) schema = range.aboveMin ? schema.gt(range.min) : schema.min(range.min);
  if (range?.max !== undefined) schema = schema.max(range.max);
  return schema;
}

function schemaOf(row: OptionRow): z.ZodType {
  switch (row.kind) {
    case "int":
    case "float":
      return numberSchema(row);
    case "bool":
      return z.boolean();
    case "strings": {
      let item = z.string();
      if (row.range?.maxItemLength !== undefined) item = item.min(1).max(row.range.maxItemLength);
      let list = z.array(item);
      if (row.range?.min !== undefined) list = list.min(row.range.min);
      if (row.range?.maxItems !== undefined) list = list.max(row.range.maxItems);
      return list;
    }
    case "ints":
      return z.array(numberSchema(row));
    case "bias":
      return z.record(z.string().regex(/^\d+$/, "keys must be token ids"), z.number());
  }
}

/** The zod fields of every wire name (null means unset, as OpenAI's clients send it). */
export function wireOptionFields(): Record<string, z.ZodType> {
  const fields: Record<string, z.ZodType> = {};
  for (const [, row] of WIRE_ROWS) {
    for (const name of row.wire) fields[name] = schemaOf(row).nullable().optional().describe(row.description);
  }
  return fields;
}

/**
 * The options a parsed body sets. Where a parameter has synonyms (repeat_penalty, repetition_penalty)
 * and the body sends several, a name in `preferred` wins, then the table's order.
 */
export function readWireOptions(body: Record<string, unknown>, preferred: readonly string[] = []): OptionValues {
  const values: Record<string, unknown> = {};
  for (const [key, row] of WIRE_ROWS) {
    const names = [...row.wire].sort((a, b) => Number(preferred.includes(b)) - Number(preferred.includes(a)));
    const name = names.find((n) => body[n] !== undefined && body[n] !== null);
    if (name !== undefined) values[key] = body[name];
  }
  return values as OptionValues;
}

/** Option values under their wire names (a `preferred` one, else the row's first), for a client that sends them. */
export function toWireNames(values: OptionValues, preferred: readonly string[] = []): Record<string, unknown> {
  const named: Record<string, unknown> = {};
  for (const [key, row] of WIRE_ROWS) {
    if (values[key] !== undefined) named[row.wire.find((name) => preferred.includes(name)) ?? row.wire[0]!] = values[key];
  }
  return named;
}

type WireNames<K extends OptionKey> = (typeof OPTIONS)[K] extends { wire: readonly (infer N extends string)[] } ? N : never;

/** Every parameter under its wire names (null: unset), as vLLM's SamplingParams takes them. */
export type WireOptions = { [K in OptionKey as WireNames<K>]?: OptionValue<K> | null };

/** The wire names of every row, for checks that walk them. */
export function wireOptionNames(): Array<{ key: OptionKey; name: string }> {
  return WIRE_ROWS.flatMap(([key, row]) => row.wire.map((name) => ({ key, name })));
}
