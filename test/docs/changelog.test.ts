// CHANGELOG.md keeps Keep a Changelog's shape, and its newest section is the version llamux reports.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import packageJson from "../../package.json" with { type: "json" };

const changelog = readFileSync(join(import.meta.dir, "..", "..", "CHANGELOG.md"), "utf8");
const versions = [...changelog.matchAll(/^## \[([^\]]+)\] - (\d{4}-\d{2}-\d{2}|unreleased)$/gm)];

test("the newest section of CHANGELOG.md is package.json's version", () => {
  expect(versions.length).toBeGreaterThan(0);
  expect(versions[0]![1]).toBe(packageJson.version);
});

test("every section uses Keep a Changelog's headings", () => {
  const allowed = new Set(["Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"]);
  for (const [, kind] of changelog.matchAll(/^### (.+)$/gm)) expect(allowed).toContain(kind!);
  for (const heading of changelog.match(/^## .*$/gm) ?? []) expect(heading).toMatch(/^## \[[^\]]+\] - (\d{4}-\d{2}-\d{2}|unreleased)$/);
});
