// Where the native libraries are loaded from: LLAMUX_LIB_DIR if set, the directory a compiled
// executable extracted its embedded libraries to, the checkout's .native/lib, or in the npm package the
// prebuilt libraries of its dependencies linked with its own (package-libraries.ts).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { packageLibraryDir } from "./package-libraries.ts";

let extractedDir: string | undefined;
let packagedDir: string | undefined;

/** Called by the compiled executable's entry point once it has extracted its embedded libraries. */
export function useExtractedLibraries(dir: string): void {
  extractedDir = dir;
}

export function libraryDir(): string {
  if (process.env.LLAMUX_LIB_DIR) return process.env.LLAMUX_LIB_DIR;
  if (extractedDir) return extractedDir;
  const checkout = join(import.meta.dir, "..", ".native", "lib");
  const packaged = join(import.meta.dir, "..", "native");
  if (existsSync(checkout) || !existsSync(join(packaged, "prebuilt.json"))) return checkout;
  packagedDir ??= packageLibraryDir(packaged);
  return packagedDir;
}
