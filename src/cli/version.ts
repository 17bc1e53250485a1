// `llamux --version` and `llamux version`: llamux's version, the llama.cpp release and commit it was built
// against, what the loaded libraries say they were built from, what llama.cpp reports about this machine,
// and where it will compute.
import { parseArgs } from "node:util";
import { llamaCppCommit, llamaCppRelease, llamuxVersion } from "../version.ts";
import { helpFlag, renderHelp, type HelpPage } from "./help-layout.ts";

export { llamaCppCommit, llamaCppRelease, llamuxVersion };

export const versionPage: HelpPage = {
  usage: ["llamux version"],
  description: `Prints the versions of llamux and llama.cpp (the release and the commit of its pinned source), the ggml
version and commit the loaded libraries were built from, llama.cpp's report of this machine (CPU features,
back ends) and whether a GPU back end is available. "llamux --version" does the same.`,
  flags: helpFlag,
};

export const versionHelp = renderHelp(versionPage);

export async function versionCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: helpFlag });
  if (values.help) {
    console.log(versionHelp);
    return 0;
  }
  console.log(`llamux ${llamuxVersion}`);
  console.log(`llama.cpp ${llamaCppRelease} (commit ${llamaCppCommit.slice(0, 7)})`);
  // Loading the libraries can fail (missing, wrong variant); the versions above are printed first.
  const { loadNative, computeSummary } = await import("../../ffi/native.ts");
  const native = loadNative();
  console.log(`libraries: ggml ${native.ggml.ggml_version()}, built from commit ${native.ggml.ggml_commit()}`);
  const systemInfo = String(native.llama.llama_print_system_info()).trim();
  console.log(`system: ${systemInfo}`);
  console.log(computeSummary());
  return 0;
}
