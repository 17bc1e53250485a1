// A generated section of README.md: the text between a start and an end marker, replaced by what the
// code says. `--check` (as test/docs/readme.test.ts runs it) exits 1 where the README is out of date.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const README = join(import.meta.dir, "..", "README.md");

export interface ReadmeSection {
  start: string;
  end: string;
  /** The section's content, without the markers. */
  render(): string;
}

export function readmeWithSection(readme: string, section: ReadmeSection): string {
  const start = readme.indexOf(section.start);
  const end = readme.indexOf(section.end);
  if (start < 0 || end < start) throw new Error(`README.md has no "${section.start}" ... "${section.end}" markers`);
  return `${readme.slice(0, start)}${section.start}\n${section.render()}\n${section.end}${readme.slice(end + section.end.length)}`;
}

/** Writes the section into README.md, or with --check says whether it is current. */
export function writeReadmeSection(section: ReadmeSection, what: string, script: string): void {
  const current = readFileSync(README, "utf8");
  const updated = readmeWithSection(current, section);
  if (process.argv.includes("--check")) {
    if (updated !== current) {
      console.error(`README.md's ${what} is out of date: run bun ${script}`);
      process.exit(1);
    }
  } else {
    writeFileSync(README, updated);
    console.log(`README.md: ${what} written`);
  }
}

/** Text safe inside a markdown table cell. */
export const cell = (text: string) => text.replaceAll("|", "\\|").replace(/\s+/g, " ").trim();
