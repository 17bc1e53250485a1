// Where this llamux runs from: the compiled executable (modules live under /$bunfs/), the sources, or the
// npm package (the sources compiled to JavaScript, beside them as .js files).
import { join } from "node:path";

export const isCompiledExecutable: boolean = import.meta.path.startsWith("/$bunfs/");

/** ".ts" when run from the sources, ".js" in the npm package: the extension of every module of this llamux. */
const moduleExtension = import.meta.path.endsWith(".js") ? ".js" : ".ts";

/** The URL of a module beside `base` (an import.meta.url), named without its extension ("./engine-worker"). */
export function moduleUrl(stem: string, base: string): URL {
  return new URL(`${stem}${moduleExtension}`, base);
}

/** The command line that starts this same llamux again (the executable, or Bun with src/main). */
export function llamuxCommand(): string[] {
  return isCompiledExecutable ? [process.execPath] : [process.execPath, join(import.meta.dir, "..", `main${moduleExtension}`)];
}
