// `llamux --version` and `llamux version`: llamux's version, the llama.cpp release it was built
// against, what llama.cpp reports about this machine, and where it will compute.
import { parseArgs } from "node:util";
import { llamaCppRelease, llamuxVersion } from "../version.ts";

export { llamaCppRelease, llamuxVersion };

export const versionHelp = `Usage: llamux version

Prints the versions of llamux and llama.cpp, llama.cpp's report of this machine (CPU features, back ends)
and whether a GPU back end is available. "llamux --version" does the same.

Options:
  -h, --help   show this help`;

export async function versionCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { help: { type: "boolean", short: "h" } } });
  if (values.help) {
    console.log(versionHelp);
    return 0;
  }
  console.log(`llamux ${llamuxVersion}`);
  console.log(`llama.cpp ${llamaCppRelease}`);
  // Loading the libraries can fail (missing, wrong variant); the versions above are printed first.
  const { loadNative, computeSummary } = await import("../../ffi/native.ts");
  const systemInfo = String(loadNative().llama.llama_print_system_info()).trim();
  console.log(`system: ${systemInfo}`);
  console.log(computeSummary());
  return 0;
}
