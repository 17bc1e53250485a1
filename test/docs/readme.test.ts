// README.md's configuration and parameter tables are generated from the code; this keeps them from drifting.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readmeWithConfig } from "../../scripts/gen-readme-config.ts";
import { readmeWithOptions } from "../../scripts/gen-readme-options.ts";

test("README.md's configuration table matches llamux serve --help and src/config.ts", () => {
  const readme = readFileSync(join(import.meta.dir, "..", "..", "README.md"), "utf8");
  expect(readme).toContain("| `--max-model-len N` |");
  expect(readme).toContain("| `OLLAMA_KEEP_ALIVE` |");
  expect(readmeWithConfig(readme)).toBe(readme);
});

test("README.md's parameter table matches the option table (src/options/table.ts)", () => {
  const readme = readFileSync(join(import.meta.dir, "..", "..", "README.md"), "utf8");
  expect(readme).toContain("| `xtc_probability` |");
  expect(readme).toContain("`dry_sequence_breakers`");
  expect(readmeWithOptions(readme)).toBe(readme);
});
