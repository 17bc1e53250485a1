// `llamux --help` and every command's help follow one layout, and docs/configuration.md, generated from the
// same flag tables, lists exactly the flags each help shows and every environment variable the code reads.
import { describe, expect, test } from "bun:test";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { allEnvVars, commandPages, configurationSection } from "../../scripts/gen-readme-config.ts";
import { readmeWithSection, sectionFile } from "../../scripts/readme-section.ts";
import { commands } from "../../src/cli/commands.ts";
import { HELP_WIDTH } from "../../src/cli/help-layout.ts";
import { topLevelHelp } from "../../src/cli/help.ts";
import { llamux } from "../cli/cli-fixture.ts";

const root = join(import.meta.dir, "..", "..");

interface Section { title: string; items: Array<{ term: string; text: string }> }

/**
 * Reads a help text in the one layout, throwing on the first departure from it: "Usage:" lines, paragraphs,
 * then titled sections ("Title:" and items "  term   text", each section's texts starting at one column,
 * wrapped lines indented to it), "Options:" ending with -h, --help, an optional "Environment:", notes.
 */
export function readHelpLayout(help: string, command: string): { sections: Section[] } {
  const lines = help.split("\n");
  const fail = (index: number, why: string): never => {
    throw new Error(`${command} --help, line ${index + 1} (${JSON.stringify(lines[index])}): ${why}`);
  };
  lines.forEach((line, i) => {
    if (line !== line.trimEnd()) fail(i, "trailing spaces");
    if (line.length > HELP_WIDTH && line.trim().includes(" ")) fail(i, `longer than ${HELP_WIDTH} columns`);
    if (line === "" && lines[i + 1] === "") fail(i, "two blank lines");
  });
  if (!lines[0]!.startsWith(`Usage: ${command}`)) fail(0, `the first line is not "Usage: ${command} ..."`);
  let i = 1;
  while (lines[i]?.startsWith("       llamux ")) i++;
  if (lines[i] !== "" || !lines[i + 1] || /^\s/.test(lines[i + 1]!)) fail(i, "the usage is not followed by a blank line and a description");
  const sections: Section[] = [];
  let current: Section | undefined;
  let column = 0;
  for (i += 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "") {
      current = undefined;
      continue;
    }
    if (/^[A-Z][A-Za-z ]*:$/.test(line)) {
      if (lines[i - 1] !== "") fail(i, "a section title without a blank line before it");
      current = { title: line.slice(0, -1), items: [] };
      sections.push(current);
      column = 0;
      continue;
    }
    if (!current) {
      if (/^\s/.test(line)) fail(i, "an indented line outside a section");
      continue; // description or notes
    }
    // An item starts at column 2 (an option without a short name at 6, under the "-x, " of those with one).
    const item = /^ {2}((?: {4}(?=--))?\S.*?)(?: {3,}(\S.*))?$/.exec(line);
    const continuation = !item && /^ {3,}\S/.test(line) && current.items.length > 0;
    if (continuation) {
      const indent = line.length - line.trimStart().length;
      if (column === 0) column = indent; // a term too long for the column puts its text on the next line
      if (indent !== column) fail(i, `a wrapped line indented ${indent}, not to the section's column ${column}`);
      current.items.at(-1)!.text += `${current.items.at(-1)!.text ? " " : ""}${line.trim()}`;
    } else if (item) {
      const textColumn = item[2] === undefined ? 0 : line.indexOf(item[2], 2 + item[1]!.length);
      if (textColumn && column && textColumn !== column) fail(i, `text at column ${textColumn}, not the section's ${column}`);
      if (textColumn) column = textColumn;
      current.items.push({ term: item[1]!, text: item[2] ?? "" });
    } else {
      fail(i, `not an item of the ${current.title} section`);
    }
  }
  const titles = sections.map((section) => section.title);
  if (titles.filter((title) => title === "Options").length !== 1) throw new Error(`${command} --help has ${titles.filter((t) => t === "Options").length} Options sections`);
  const optionsAt = titles.indexOf("Options");
  if (titles.slice(optionsAt + 1).some((title) => title !== "Environment")) throw new Error(`${command} --help: only Environment may follow Options (${titles.join(", ")})`);
  const options = sections[optionsAt]!.items;
  if (options.at(-1)?.term !== "-h, --help" || options.at(-1)?.text !== "show this help") throw new Error(`${command} --help: Options does not end with "-h, --help   show this help"`);
  for (const { term } of options) if (!/^(-[a-zA-Z], |    )--[a-z][a-z0-9-]*( \S+)?$/.test(term)) throw new Error(`${command} --help: option "${term}" is not "-x, --name VALUE" or "    --name VALUE"`);
  for (const { term } of sections.find((section) => section.title === "Environment")?.items ?? []) {
    if (!/^[A-Z][A-Z0-9_]*$/.test(term)) throw new Error(`${command} --help: "${term}" is not an environment variable's name`);
  }
  return { sections };
}

const configurationPage = () => readFileSync(join(root, "docs", "configuration.md"), "utf8");

/** The flags docs/configuration.md lists under "### COMMAND". */
function documentedFlags(page: string, command: string): string[] {
  const start = page.indexOf(`\n### ${command}\n`);
  if (start < 0) return [];
  const end = page.indexOf("\n### ", start + 1);
  return [...page.slice(start, end < 0 ? undefined : end).matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1]!.replaceAll("\\|", "|"));
}

describe("help layout", () => {
  test("llamux --help", () => {
    const { sections } = readHelpLayout(topLevelHelp(), "llamux");
    const listed = sections.find((section) => section.title === "Commands")!.items.map((item) => item.term);
    expect(listed).toEqual(Object.entries(commands).filter(([, entry]) => !entry.hidden).map(([name]) => name));
  });

  for (const [name, entry] of Object.entries(commands).filter(([, entry]) => !entry.hidden || entry.summary.includes("container"))) {
    test(`llamux ${name} --help`, async () => {
      readHelpLayout((await entry.load()).help, `llamux ${name}`);
    });
  }

  test("the help a process prints is the layout's, for --help, -h and help COMMAND", async () => {
    for (const args of [["serve", "--help"], ["rpc-server", "-h"], ["health", "--help"], ["help", "keys"]]) {
      const result = await llamux(args);
      expect(result.exitCode).toBe(0);
      expect(result.stderr).toBe("");
      readHelpLayout(result.stdout.trimEnd(), `llamux ${args[0] === "help" ? args[1] : args[0]}`);
    }
  });
});

describe("docs/configuration.md", () => {
  test("is what scripts/gen-readme-config.ts generates from the flag tables and src/config.ts", async () => {
    const page = configurationPage();
    expect(readmeWithSection(page, await configurationSection())).toBe(page);
    expect(sectionFile(await configurationSection())).toBe(join(root, "docs", "configuration.md"));
  });

  test("lists, for each command, exactly the flags its --help shows", async () => {
    const page = configurationPage();
    const pages = await commandPages();
    expect(pages.length).toBeGreaterThan(20);
    for (const { command } of pages) {
      const entry = command === "llamux" ? undefined : commands[command.slice("llamux ".length)];
      const help = entry ? (await entry.load()).help : topLevelHelp();
      const options = readHelpLayout(help, command).sections.find((section) => section.title === "Options")!.items.map((item) => item.term.trim());
      expect(documentedFlags(page, command)).toEqual(options);
    }
    expect(documentedFlags(page, "llamux serve")).toContain("--max-model-len N");
  });

  test("lists every environment variable the code reads", () => {
    const page = configurationPage();
    const read = new Set<string>();
    const visit = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) visit(path);
        else if (name.endsWith(".ts")) {
          // env.NAME, env["NAME"], and the accessors' read(env, "NAME")
          for (const match of readFileSync(path, "utf8").matchAll(/\benv(?:\.|\["|\s*,\s*")([A-Z][A-Z0-9_]+)/g)) read.add(match[1]!);
        }
      }
    };
    visit(join(root, "src"));
    visit(join(root, "ffi"));
    for (const name of ["HOME", "PATH"]) read.delete(name);
    expect(read.size).toBeGreaterThan(20);
    for (const name of read) expect(page).toContain(`| \`${name}\` |`);
    for (const variable of allEnvVars) expect(page).toContain(`| \`${variable.name}\` |`);
  });
});
