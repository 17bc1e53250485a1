// Where the native libraries are loaded from: LLAMUX_LIB_DIR if set, the directory a compiled
// executable extracted its embedded libraries to, or the checkout's .native/lib.
import { join } from "node:path";

let extractedDir: string | undefined;

/** Called by the compiled executable's entry point once it has extracted its embedded libraries. */
export function useExtractedLibraries(dir: string): void {
  extractedDir = dir;
}

export function libraryDir(): string {
  if (process.env.LLAMUX_LIB_DIR) return process.env.LLAMUX_LIB_DIR;
  if (extractedDir) return extractedDir;
  return join(import.meta.dir, "..", ".native", "lib");
}
