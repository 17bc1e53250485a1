// What differs between the profiles is a field of the profile (DESIGN.md, "Third wave"): no code outside
// the profiles' own files asks which profile it serves by comparing a profile's name with its letter.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { profileNamesOf, profiles } from "../../../src/server/profiles/index.ts";

const root = join(import.meta.dir, "..", "..", "..");
const profilesDir = join(root, "src", "server", "profiles");
const LETTER_COMPARISON = /(?:===|!==)\s*["'][abc]["']|["'][abc]["']\s*(?:===|!==)/;

/** "file:line: text" for each line of `source` that compares something with a profile letter. */
function letterComparisons(file: string, source: string): string[] {
  return source.split("\n").flatMap((line, index) => (LETTER_COMPARISON.test(line) ? [`${relative(root, file)}:${index + 1}: ${line.trim()}`] : []));
}

test("the scanner finds a comparison with a profile letter, either way round", () => {
  expect(letterComparisons(join(root, "src", "x.ts"), 'const ollama = name === "a";\nif ("c" !== profile) go();\nconst all = name === "all";')).toEqual([
    'src/x.ts:1: const ollama = name === "a";',
    'src/x.ts:2: if ("c" !== profile) go();',
  ]);
});

/** Where profiles are chosen and served (src/chat compares characters such as "b" in its parsers). */
const SCANNED = ["cli", "persona", "service", "store", "server", "generation", "sdk", "options", "mcp", "keys"];

test("no file of the commands, the store, the services or the server outside the profiles compares a profile name with a letter", () => {
  const files = SCANNED.flatMap((dir) => readdirSync(join(root, "src", dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name)))
    .filter((file) => !file.startsWith(`${profilesDir}/`));
  expect(files.length).toBeGreaterThan(100);
  expect(files.flatMap((file) => letterComparisons(file, readFileSync(file, "utf8")))).toEqual([]);
});

test("serve's start-up rules are the profiles' fields: Ollama's environment on a, vLLM's on b, LM Studio's on c", () => {
  expect(profileNamesOf("all")).toEqual(["a", "b", "c"]);
  expect(profileNamesOf("b")).toEqual(["b"]);
  const { a, b, c } = profiles;
  expect([a.ollamaEnvironment, b.ollamaEnvironment, c.ollamaEnvironment]).toEqual([true, false, false]);
  expect([a.apiKeyVariable, b.apiKeyVariable, c.apiKeyVariable]).toEqual([undefined, "VLLM_API_KEY", undefined]);
  expect([a.pullsFrom, b.pullsFrom, c.pullsFrom]).toEqual(["ollama-registry", "hub", "hub"]);
  expect([a.contextFlagIsLimit, b.contextFlagIsLimit, c.contextFlagIsLimit]).toEqual([false, true, false]);
  expect(a.modelRules.instances).toBe("one");
  expect(a.modelRules.modelNotFound?.("x")).toBe('model "x" not found, try pulling it first');
  expect([b.modelRules, c.modelRules]).toEqual([{}, {}]);
  expect([a.loadsBeforeReady, b.loadsBeforeReady, c.loadsBeforeReady]).toEqual([false, true, false]);
  expect([a.lmStudioMcpConfig, b.lmStudioMcpConfig, c.lmStudioMcpConfig]).toEqual([false, false, true]);
  expect([a.metrics, c.metrics]).toEqual([undefined, undefined]);
  expect(typeof b.metrics).toBe("function");
  expect([a.sdkDiscovery, b.sdkDiscovery, c.sdkDiscovery]).toEqual([false, false, true]);
});
