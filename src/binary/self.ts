// Where this llamux runs from: the compiled executable (modules live under /$bunfs/) or the sources.
import { join } from "node:path";

export const isCompiledExecutable: boolean = import.meta.path.startsWith("/$bunfs/");

/** The command line that starts this same llamux again (the executable, or Bun with src/main.ts). */
export function llamuxCommand(): string[] {
  return isCompiledExecutable ? [process.execPath] : [process.execPath, join(import.meta.dir, "..", "main.ts")];
}
