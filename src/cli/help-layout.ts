// The one layout of every `--help`: usage lines, a description, named sections of terms (commands, agents,
// Modelfile lines...), the options, the environment, closing notes. Flags are declared once, as parseArgs
// reads them plus what they mean: parseArgs takes the same table (it ignores the extra fields), so a flag
// cannot be parsed without being shown, and docs/configuration.md is generated from the same tables.
import type { EnvVar } from "../config.ts";

/** A flag as node:util's parseArgs reads it, with its help. */
export interface Flag {
  type: "string" | "boolean";
  short?: string;
  multiple?: boolean;
  /** The value's placeholder in the help (`--ctx-size N`); string flags only. */
  value?: string;
  /** What the flag does, its default and its range, as one paragraph. */
  help: string;
}

export type Flags = Readonly<Record<string, Flag>>;

/** The help flag every command takes, last in its options. */
export const helpFlag = { help: { type: "boolean", short: "h", help: "show this help" } } as const satisfies Flags;

export interface HelpSection {
  title: string;
  items: ReadonlyArray<readonly [term: string, text: string]>;
}

export interface HelpPage {
  /** Each way to call the command, without "Usage: " ("llamux serve [MODEL] [options]"). */
  usage: string[];
  /** Paragraphs separated by blank lines; each is wrapped to the page's width. */
  description: string;
  /** Sections before the options (Commands, Agents, Modelfile, ...). */
  sections?: HelpSection[];
  /** The options; the help flag comes last. */
  flags: Flags;
  /** Environment variables the command reads. */
  environment?: readonly EnvVar[];
  /** Paragraphs after everything else. */
  notes?: string;
}

/** Columns a help page fills at most; a longer word (a URL, a JSON example) runs past on its own line. */
export const HELP_WIDTH = 100;
/** Where descriptions start in a section: a term longer than this puts its text on the next line. */
const MAX_TERM_WIDTH = 30;

/** Text of one paragraph wrapped to `width`, each line after the first indented by `indent`. */
export function wrap(text: string, width: number, indent = ""): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.trim().split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = indent + word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

const paragraphs = (text: string) => text.trim().split(/\n\s*\n/).map((paragraph) => wrap(paragraph, HELP_WIDTH).join("\n")).join("\n\n");

/** A section's items, two columns: the term, then its text wrapped with a hanging indent. */
function renderItems(items: ReadonlyArray<readonly [string, string]>): string {
  const column = 2 + Math.min(MAX_TERM_WIDTH, Math.max(...items.map(([term]) => term.length))) + 3;
  const lines: string[] = [];
  for (const [term, text] of items) {
    const lead = `  ${term}`;
    const indent = " ".repeat(column);
    if (lead.length + 3 > column) {
      lines.push(lead);
      lines.push(...wrap(text, HELP_WIDTH - column).map((part) => indent + part));
    } else {
      const [first = "", ...rest] = wrap(text, HELP_WIDTH - column);
      lines.push(lead.padEnd(column) + first, ...rest.map((part) => indent + part));
    }
  }
  return lines.join("\n");
}

/** How a flag is written in the left column: `-n, --max-tokens N` or `    --mcp`. */
export function flagTerm(name: string, flag: Flag): string {
  const long = `--${name}${flag.type === "string" ? ` ${flag.value ?? "VALUE"}` : ""}`;
  return flag.short ? `-${flag.short}, ${long}` : `    ${long}`;
}

/** The flags in help order: as declared, the help flag last. */
export function flagEntries(flags: Flags): Array<[string, Flag]> {
  const entries = Object.entries(flags).filter(([name]) => name !== "help");
  return [...entries, ["help", flags.help ?? helpFlag.help]];
}

const envText = (variable: EnvVar) => `${variable.description}${variable.default ? ` (default ${variable.default})` : ""}`;

export function renderHelp(page: HelpPage): string {
  const [first, ...others] = page.usage;
  const blocks = [[`Usage: ${first}`, ...others.map((usage) => `       ${usage}`)].join("\n"), paragraphs(page.description)];
  for (const section of page.sections ?? []) blocks.push(`${section.title}:\n${renderItems(section.items)}`);
  blocks.push(`Options:\n${renderItems(flagEntries(page.flags).map(([name, flag]) => [flagTerm(name, flag), flag.help]))}`);
  if (page.environment?.length) blocks.push(`Environment:\n${renderItems(page.environment.map((variable) => [variable.name, envText(variable)]))}`);
  if (page.notes) blocks.push(paragraphs(page.notes));
  return blocks.join("\n\n");
}
