// A generated section of a page of the manual (README.md or a page of docs/): the text between a start and
// an end marker, replaced by what the code says. `--check` (as the doc tests run it) exits 1 where the
// page is out of date.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "..");
export const README = join(ROOT, "README.md");

export interface ReadmeSection {
  /** The page, relative to the repository's root (default README.md). */
  file?: string;
  start: string;
  end: string;
  /** The section's content, without the markers. */
  render(): string;
}

export const sectionFile = (section: ReadmeSection) => join(ROOT, section.file ?? "README.md");

export function readmeWithSection(readme: string, section: ReadmeSection): string {
  const start = readme.indexOf(section.start);
  const end = readme.indexOf(section.end);
  if (start < 0 || end < start) throw new Error(`${section.file ?? "README.md"} has no "${section.start}" ... "${section.end}" markers`);
  return `${readme.slice(0, start)}${section.start}\n${section.render()}\n${section.end}${readme.slice(end + section.end.length)}`;
}

/** Writes the section into its page, or with --check says whether it is current. */
export function writeReadmeSection(section: ReadmeSection, what: string, script: string): void {
  const path = sectionFile(section);
  const name = section.file ?? "README.md";
  const current = readFileSync(path, "utf8");
  const updated = readmeWithSection(current, section);
  if (process.argv.includes("--check")) {
    if (updated !== current) {
      console.error(`${name}'s ${what} is out of date: run bun ${script}`);
      process.exit(1);
    }
  } else {
    writeFileSync(path, updated);
    console.log(`${name}: ${what} written`);
  }
}

/** Text safe inside a markdown table cell. */
export const cell = (text: string) => text.replaceAll("|", "\\|").replace(/\s+/g, " ").trim();
