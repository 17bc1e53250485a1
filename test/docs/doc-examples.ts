// The fenced examples of the manual (README.md and docs/**/*.md) and their markers. An HTML comment on
// the line before a fence says how the doc test treats the block (test/docs/examples.test.ts):
//
//   (no marker)                        sh: run against the test's shared servers; ts/js: run as a module
//   <!-- example: own server -->       sh: run with ports of its own (it starts and stops a server itself)
//   <!-- example: own server (profile b) -->   the same, for a block that leaves a server running: the
//                                      test waits until that profile's port answers, then stops it
//   <!-- example: with NAME[, NAME] --> ts/js: a fragment, run after the named preludes (a client, a model)
//   <!-- example: skip (REASON) -->    not run, for one of SKIP_REASONS
//
// `; expect "TEXT"` after any of them adds text the output must contain. Whatever the marker, every
// `llamux COMMAND --flag` and `make TARGET` of an sh block must still exist, and so must those of a
// command quoted inline in the prose (`llamux serve ./model.gguf --mcp`, as README's task table has them).
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";

export const ROOT = join(import.meta.dir, "..", "..");

/** Why an example may stay unrun: what the test machine cannot give it. */
export const SKIP_REASONS = [
  "needs a GPU",
  "needs the network",
  "needs a real model",
  "needs root",
  "needs a container runtime",
  "needs a coding agent installed",
  "needs audio devices",
  "needs a release download",
  "builds or tests the whole project",
] as const;

/** Languages whose examples must run or say why not. */
export const RUN_LANGUAGES = new Set(["sh", "bash", "shell", "ts", "typescript", "js", "javascript"]);

export type ExampleKind =
  | { kind: "client" }
  | { kind: "own-server"; profile?: "a" | "b" | "c" }
  | { kind: "with"; preludes: string[] }
  | { kind: "skip"; reason: string };

export interface Example {
  /** The page, relative to the repository's root, and the fence's line (1-based). */
  file: string;
  line: number;
  language: string;
  code: string;
  kind: ExampleKind;
  expects: string[];
  /** A marker that could not be read: the test reports it. */
  problem?: string;
}

/** README.md and every markdown page under docs/. */
export function manualPages(): string[] {
  const pages = [join(ROOT, "README.md")];
  const visit = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) visit(path);
      else if (name.endsWith(".md")) pages.push(path);
    }
  };
  visit(join(ROOT, "docs"));
  return pages;
}

function readMarker(text: string): { kind: ExampleKind; expects: string[]; problem?: string } {
  const expects = [...text.matchAll(/;\s*expect "([^"]+)"/g)].map((match) => match[1]!);
  const head = text.replace(/;\s*expect "[^"]+"/g, "").trim();
  let match: RegExpExecArray | null;
  if ((match = /^skip \((.+)\)$/.exec(head))) {
    const reason = match[1]!;
    const problem = (SKIP_REASONS as readonly string[]).includes(reason) ? undefined : `"${reason}" is not one of the reasons an example may be skipped (${SKIP_REASONS.join("; ")})`;
    return { kind: { kind: "skip", reason }, expects, ...(problem ? { problem } : {}) };
  }
  if ((match = /^own server(?: \(profile ([abc])\))?$/.exec(head))) return { kind: { kind: "own-server", ...(match[1] ? { profile: match[1] as "a" | "b" | "c" } : {}) }, expects };
  if ((match = /^with (.+)$/.exec(head))) return { kind: { kind: "with", preludes: match[1]!.split(",").map((name) => name.trim()) }, expects };
  if (head === "") return { kind: { kind: "client" }, expects };
  return { kind: { kind: "client" }, expects, problem: `cannot read the marker "${text}"` };
}

/** The examples of one page, with their markers. */
export function examplesOf(path: string): Example[] {
  const lines = readFileSync(path, "utf8").split("\n");
  const examples: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\w+)\s*$/.exec(lines[i]!);
    if (!fence) {
      if (/^```/.test(lines[i]!)) {
        // a fence without a language, or one that closes: skip to its end
        const end = lines.findIndex((line, j) => j > i && /^```\s*$/.test(line));
        i = end < 0 ? lines.length : end;
      }
      continue;
    }
    const end = lines.findIndex((line, j) => j > i && /^```\s*$/.test(line));
    const code = lines.slice(i + 1, end < 0 ? undefined : end).join("\n");
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === "") before--;
    const marker = /^<!-- example:(.*)-->$/.exec(lines[before]?.trim() ?? "");
    const language = fence[1]!;
    if (RUN_LANGUAGES.has(language)) {
      const read = marker ? readMarker(marker[1]!) : { kind: { kind: "client" } as ExampleKind, expects: [] };
      examples.push({ file: relative(ROOT, path), line: i + 1, language, code, ...read });
    }
    i = end < 0 ? lines.length : end;
  }
  return examples;
}

export const isShell = (example: Example) => ["sh", "bash", "shell"].includes(example.language);

/** The shell commands of a block: comments dropped, continued lines joined, split at ; && || and |. */
export function shellCommands(code: string): string[][] {
  const joined = code.replace(/\\\n\s*/g, " ");
  const commands: string[][] = [];
  for (const line of joined.split("\n")) {
    const withoutComment = line.replace(/(^|\s)#.*$/, "");
    for (const part of withoutComment.split(/;|&&|\|\||\||&(?!\d)/)) {
      const words = part.match(/(?:[^\s'"]|'[^']*'|"[^"]*")+/g) ?? [];
      if (words.length) commands.push(words);
    }
  }
  return commands;
}

/** Commands quoted inline in a page's prose (outside fences): `llamux ...`, `sudo llamux ...`, `vllm serve ...`, `make ...`. */
export function inlineCommands(path: string): Array<{ file: string; line: number; code: string }> {
  const lines = readFileSync(path, "utf8").split("\n");
  const found: Array<{ file: string; line: number; code: string }> = [];
  let inFence = false;
  for (const [i, line] of lines.entries()) {
    if (/^```/.test(line)) inFence = !inFence;
    if (inFence) continue;
    for (const [, code] of line.matchAll(/`((?:sudo )?(?:llamux|vllm serve|make) [^`]+)`/g)) found.push({ file: relative(ROOT, path), line: i + 1, code: code! });
  }
  return found;
}
