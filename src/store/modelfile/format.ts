// Prints a model back as Modelfile text (`show --modelfile`, /api/show), quoted so that
// parseModelfile reads every value back exactly.

export interface ModelfileContent {
  /** The base model (a blob path or a name), then any projectors. */
  from: string[];
  adapters?: string[];
  template?: string;
  system?: string;
  parameters?: Record<string, unknown>;
  messages?: Array<{ role: string; content: string }>;
  license?: string[];
}

/** Instruction lines in Ollama's order: FROM, ADAPTER, TEMPLATE, SYSTEM, PARAMETER, LICENSE, MESSAGE. */
export function formatModelfile(content: ModelfileContent): string {
  const lines: string[] = [];
  for (const from of content.from) lines.push(`FROM ${quoteValue(from)}`);
  for (const adapter of content.adapters ?? []) lines.push(`ADAPTER ${quoteValue(adapter)}`);
  if (content.template !== undefined) lines.push(`TEMPLATE ${quoteValue(content.template)}`);
  if (content.system !== undefined) lines.push(`SYSTEM ${quoteValue(content.system)}`);
  for (const [name, value] of Object.entries(content.parameters ?? {})) {
    for (const item of Array.isArray(value) ? value : [value]) lines.push(`PARAMETER ${name} ${quoteValue(String(item))}`);
  }
  for (const license of content.license ?? []) lines.push(`LICENSE ${quoteValue(license)}`);
  for (const message of content.messages ?? []) lines.push(`MESSAGE ${message.role} ${quoteValue(message.content)}`);
  return lines.map((line) => `${line}\n`).join("");
}

/**
 * A value as the parser reads it back: bare when it is one line without edge spaces or a leading quote,
 * else in """ (or " when the text itself has a line ending in """). A quote closes only at a line
 * end, so no line inside the value may end with the closing quote.
 */
export function quoteValue(value: string): string {
  const plain = value !== "" && !value.includes("\n") && value.trim() === value && !value.startsWith('"');
  if (plain) return value;
  for (const quote of ['"""', '"']) {
    const innerLines = value.split("\n").slice(0, -1);
    if (!innerLines.some((line) => line.trimEnd().endsWith(quote))) return `${quote}${value}${quote}`;
  }
  throw new RangeError(`Cannot write ${JSON.stringify(value.slice(0, 40))} as a Modelfile value: its lines end in quotes`);
}
