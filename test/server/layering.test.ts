// The layering rules, held against every import of src/ and ffi/ (DESIGN.md, "Third wave"):
//   ffi/ imports nothing from src/ (bindings know nothing above them);
//   nothing under src/server/ reaches llama.cpp's bindings (ffi/): engines run in child processes;
//   a dialect (server/openai, ollama, vllm, lmstudio, anthropic) is a translator and imports no other
//   dialect, except that vLLM's and LM Studio's servers extend the OpenAI one (vllm -> openai for the
//   message format of /tokenize, lmstudio -> openai for /api/v0's handlers);
//   the shared server core imports no dialect: only the assembly (app.ts, profiles/) puts them together;
//   server/ imports nothing from cli/ (commands sit above the server);
//   chat/ and engine/ import nothing from generation/ (the interfaces they implement live beside them).
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = join(import.meta.dir, "..", "..");
const ffiDir = join(root, "ffi");

/** Every module specifier a TypeScript file names: static imports, re-exports and dynamic import(). */
function moduleSpecifiers(source: string): string[] {
  const specifiers: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^;]*?\bfrom\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const pattern of patterns) for (const match of source.matchAll(pattern)) specifiers.push(match[1]!);
  return specifiers;
}

/** The specifiers of `file` that resolve into `dir`. */
function importsInto(dir: string, file: string, source: string): string[] {
  return moduleSpecifiers(source).filter((specifier) => {
    if (!specifier.startsWith(".")) return false;
    const target = resolve(dirname(file), specifier);
    return target === dir || target.startsWith(`${dir}/`);
  });
}

const ffiImports = (file: string, source: string) => importsInto(ffiDir, file, source);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe("layering", () => {
  test("the import scanner sees every form of import", () => {
    const file = join(root, "src", "server", "example.ts");
    const source = [
      'import type { SamplerSettings } from "../../ffi/sampler.ts";',
      'import {\n  libraryDir,\n} from "../../ffi/library-dir.ts";',
      'export { LlamaModel } from "../../ffi/llama.ts";',
      'import "../../ffi/native.ts";',
      'const lazy = await import("../../ffi/mtmd.ts");',
      'import { logger } from "../log.ts";',
    ].join("\n");
    expect(ffiImports(file, source)).toEqual(["../../ffi/sampler.ts", "../../ffi/library-dir.ts", "../../ffi/llama.ts", "../../ffi/native.ts", "../../ffi/mtmd.ts"]);
  });

  test("nothing under src/server/ imports from ffi/", () => {
    const offenders = sourceFiles(join(root, "src", "server")).flatMap((file) =>
      ffiImports(file, readFileSync(file, "utf8")).map((specifier) => `${relative(root, file)} imports ${specifier}`));
    expect(offenders).toEqual([]);
  });

  test("ffi/ imports nothing from src/", () => {
    expect(offenders([ffiDir], [join(root, "src")])).toEqual([]);
  });

  test("a dialect imports no other dialect (vLLM's and LM Studio's extend the OpenAI one)", () => {
    const found = DIALECTS.flatMap((dialect) => offenders(
      [dialectDir(dialect)],
      DIALECTS.filter((other) => other !== dialect && !(ALLOWED_DIALECT_IMPORTS[dialect] ?? []).includes(other)).map(dialectDir),
    ));
    expect(found).toEqual([]);
  });

  test("no import between server/openai and server/ollama, either way", () => {
    expect(offenders([dialectDir("openai")], [dialectDir("ollama")])).toEqual([]);
    expect(offenders([dialectDir("ollama")], [dialectDir("openai")])).toEqual([]);
  });

  test("the shared server core imports no dialect; only app.ts and profiles/ assemble them", () => {
    expect(offenders(serverCore(), DIALECTS.map(dialectDir))).toEqual([]);
  });

  test("server/ imports nothing from cli/", () => {
    expect(offenders([join(root, "src", "server")], [join(root, "src", "cli")])).toEqual([]);
  });

  test("chat/ and engine/ import nothing from generation/", () => {
    const generation = join(root, "src", "generation");
    expect(offenders([join(root, "src", "chat"), join(root, "src", "engine")], [generation])).toEqual([]);
  });

  test("the rule checker finds a forbidden import when there is one", () => {
    // The same scan over this file's own fixture: a dialect file naming another dialect is caught.
    const file = join(dialectDir("anthropic"), "example.ts");
    expect(importsInto(dialectDir("openai"), file, 'import { x } from "../openai/translate.ts";')).toEqual(["../openai/translate.ts"]);
    expect(importsInto(dialectDir("openai"), file, 'import { x } from "./translate.ts";')).toEqual([]);
  });
});

const DIALECTS = ["openai", "ollama", "vllm", "lmstudio", "anthropic"] as const;
type Dialect = (typeof DIALECTS)[number];
const ALLOWED_DIALECT_IMPORTS: Partial<Record<Dialect, Dialect[]>> = { vllm: ["openai"], lmstudio: ["openai"] };
const dialectDir = (dialect: Dialect) => join(root, "src", "server", dialect);

/** Every file of src/server/ but the dialects' folders, app.ts and profiles/ (the assembly). */
function serverCore(): string[] {
  const server = join(root, "src", "server");
  const assembly = [join(server, "app.ts"), join(server, "profiles")];
  return sourceFiles(server).filter((file) =>
    !DIALECTS.some((dialect) => file.startsWith(`${dialectDir(dialect)}/`)) && !assembly.some((path) => file === path || file.startsWith(`${path}/`)));
}

/** "file imports specifier" for each import of a file under `from` (files or folders) that resolves into one of `into`. */
function offenders(from: string[], into: string[]): string[] {
  const files = from.flatMap((path) => (path.endsWith(".ts") ? [path] : sourceFiles(path)));
  return files.flatMap((file) => {
    const source = readFileSync(file, "utf8");
    return into.flatMap((dir) => importsInto(dir, file, source).map((specifier) => `${relative(root, file)} imports ${specifier}`));
  });
}
