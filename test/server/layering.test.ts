// Profiles are translations: nothing under src/server/ reaches llama.cpp's bindings (ffi/) directly.
// Request-level types come from src/engine/types.ts; native facts come through src/engine/.
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

/** The specifiers of `file` that resolve into ffi/. */
function ffiImports(file: string, source: string): string[] {
  return moduleSpecifiers(source).filter((specifier) => {
    if (!specifier.startsWith(".")) return false;
    const target = resolve(dirname(file), specifier);
    return target === ffiDir || target.startsWith(`${ffiDir}/`);
  });
}

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
});
