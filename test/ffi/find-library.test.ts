// Which file is libllama / libggml in a library directory: the CPU packages version the name
// (libllama.v0.5.0.so), the GPU ones also name their variant (libllama.cuda.v0.5.0.so).
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findLibrary } from "../../ffi/symbols.ts";

const dirs: string[] = [];
function directoryWith(...names: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "llamux-libs-"));
  dirs.push(dir);
  for (const name of names) writeFileSync(join(dir, name), "");
  return dir;
}
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

test("versioned CPU names and GPU names with their variant are found; look-alikes are not", () => {
  const cpu = directoryWith("libggml-base.so", "libggml.v0.5.0.so", "libllama.v0.5.0.so", "libllama-common.so");
  expect(findLibrary(cpu, "libllama")).toBe(join(cpu, "libllama.v0.5.0.so"));
  expect(findLibrary(cpu, "libggml")).toBe(join(cpu, "libggml.v0.5.0.so"));
  const cuda = directoryWith("libggml-base.so", "libggml-cuda.so", "libggml.cuda.v0.5.0.so", "libllama.cuda.v0.5.0.so");
  expect(findLibrary(cuda, "libllama")).toBe(join(cuda, "libllama.cuda.v0.5.0.so"));
  expect(findLibrary(cuda, "libggml")).toBe(join(cuda, "libggml.cuda.v0.5.0.so"));
  const plain = directoryWith("libllama.so", "libllama.v0.5.0.so");
  expect(findLibrary(plain, "libllama")).toBe(join(plain, "libllama.so"));
  expect(() => findLibrary(directoryWith("libllama-common.so", "libllama.so.bak"), "libllama")).toThrow('Cannot find library "libllama"');
});
