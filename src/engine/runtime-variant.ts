// Which llama.cpp build the engines load ("linux-x64-cuda", …), read from the library directory
// without loading the libraries: the server reports it and must not import ffi/ itself.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { libraryDir } from "../../ffi/library-dir.ts";

/** The build named by the library directory's VARIANT file, or null when it has none. */
export function runtimeVariant(): string | null {
  const file = join(libraryDir(), "VARIANT");
  return existsSync(file) ? readFileSync(file, "utf8").trim() : null;
}
