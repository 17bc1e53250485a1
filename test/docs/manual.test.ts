// The manual's shape (issue 46): a README short enough to read, that leads to one page per task; pages
// that lead from one to the next; links that reach their page and heading; and the tables generated from
// the code (the parameter table here, the configuration reference in configuration.test.ts).
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { anchorOf } from "../../scripts/gen-readme-config.ts";
import { pageWithOptions } from "../../scripts/gen-readme-options.ts";
import { manualPages, ROOT } from "./doc-examples.ts";

const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

/** The task pages, in the order the issue lists them and each page's "Next" leads through them. */
const TASK_PAGES = [
  "docs/quickstart.md", "docs/ollama.md", "docs/vllm.md", "docs/lm-studio.md", "docs/openai-responses-messages.md",
  "docs/coding-agents.md", "docs/tools-mcp-structured-output.md", "docs/images-audio-speech.md", "docs/prompt-cache.md",
  "docs/configuration.md", "docs/security-and-limits.md", "docs/deployment.md", "docs/sdk.md", "docs/benchmarks/README.md",
  "docs/building.md",
];

/** Markdown links of a page outside code: [text](target). */
function linksOf(text: string): string[] {
  const prose = text.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
}

/** The anchors GitHub gives a page's headings. */
function anchorsOf(text: string): Set<string> {
  const prose = text.replace(/^```[\s\S]*?^```/gm, "");
  return new Set([...prose.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1]!.replaceAll("`", ""))));
}

describe("README.md", () => {
  const readme = read("README.md");

  test("is at most 250 lines", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(250);
  });

  test("links to the index and to every task page", () => {
    const links = new Set(linksOf(readme));
    expect([...TASK_PAGES, "docs/README.md"].filter((page) => !links.has(page) && ![...links].some((link) => link.startsWith(`${page}#`)))).toEqual([]);
  });

  test("says how to serve a GGUF, point Claude Code at it, turn on MCP tools, run it as a service and deploy it to Kubernetes", () => {
    const table = readme.slice(readme.indexOf("## Find your way"), readme.indexOf("\n## ", readme.indexOf("## Find your way") + 1));
    for (const command of ["`llamux serve ./model.gguf`", "`llamux launch claude`", "--mcp`", "`sudo llamux install-service", "`llamux generate kube"]) expect(table).toContain(command);
  });
});

describe("the pages", () => {
  test("the index links to every page of docs/ but the benchmark records, which the benchmarks page lists", () => {
    const index = new Set(linksOf(read("docs/README.md")).map((link) => join("docs", link.split("#")[0]!)));
    const benchmarks = new Set(linksOf(read("docs/benchmarks/README.md")).map((link) => join("docs/benchmarks", link.split("#")[0]!)));
    const pages = manualPages().map((path) => relative(ROOT, path)).filter((page) => page.startsWith("docs/") && page !== "docs/README.md");
    expect(pages.filter((page) => !index.has(page) && !benchmarks.has(page))).toEqual([]);
  });

  test("each task page leads to the next, and the last back to the index", () => {
    for (const [i, page] of TASK_PAGES.entries()) {
      const tail = read(page).trimEnd().split("\n").at(-1)!;
      const next = TASK_PAGES[i + 1];
      const expected = next ? relative(dirname(page), next) : relative(dirname(page), "docs/README.md");
      expect({ page, tail: linksOf(tail)[0] }).toEqual({ page, tail: expected });
    }
  });

  test("every relative link reaches a file, and every #anchor a heading of its page", () => {
    const problems: string[] = [];
    for (const path of manualPages()) {
      const page = relative(ROOT, path);
      for (const link of linksOf(readFileSync(path, "utf8"))) {
        if (/^[a-z]+:/.test(link)) continue;
        const [file, anchor] = link.split("#");
        const target = file ? join(dirname(page), file) : page;
        if (!existsSync(join(ROOT, target))) problems.push(`${page}: ${link}: no such file`);
        else if (anchor && target.endsWith(".md") && !anchorsOf(read(target)).has(anchor)) problems.push(`${page}: ${link}: no such heading`);
      }
    }
    expect(problems).toEqual([]);
  });

  test("docs/configuration.md's parameter table matches the option table (src/options/table.ts)", () => {
    const page = read("docs/configuration.md");
    expect(page).toContain("| `xtc_probability` |");
    expect(page).toContain("`dry_sequence_breakers`");
    expect(pageWithOptions(page)).toBe(page);
  });
});
