// README.md's configuration table is generated from the code; this keeps it from drifting.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readmeWithConfig } from "../../scripts/gen-readme-config.ts";

test("README.md's configuration table matches llamux serve --help and src/config.ts", () => {
  const readme = readFileSync(join(import.meta.dir, "..", "..", "README.md"), "utf8");
  expect(readme).toContain("| `--max-model-len N` |");
  expect(readme).toContain("| `OLLAMA_KEEP_ALIVE` |");
  expect(readmeWithConfig(readme)).toBe(readme);
});
