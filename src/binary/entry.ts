// Start of the compiled executable. scripts/build-binary.ts generates the module that embeds the
// libraries and calls this; here they are extracted before any code can open them, then the CLI runs.
import { extractLibraries, type LibraryBundle } from "./extract-libraries.ts";
import { useExtractedLibraries } from "../../ffi/library-dir.ts";

export async function startCompiled(bundle: LibraryBundle): Promise<void> {
  // An explicit library directory wins anyway (ffi/library-dir.ts), so nothing needs extracting.
  if (!process.env.LLAMUX_LIB_DIR) {
    try {
      useExtractedLibraries(extractLibraries(bundle));
    } catch (error) {
      process.stderr.write(`llamux: ${(error as Error).message}\n`);
      process.exit(1);
    }
  }
  const { main } = await import("../main.ts");
  const code = await main(process.argv.slice(2));
  // undefined: the command keeps the process alive on its own (the engine child)
  if (code !== undefined) process.exit(code);
}
