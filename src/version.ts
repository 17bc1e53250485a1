// llamux's version and the llama.cpp release and commit it is built against: what `--version` prints and
// what the servers report (Ollama's /api/version, vLLM's /version, LM Studio's greeting and runtime).
import packageJson from "../package.json" with { type: "json" };
import nativePackages from "../scripts/native-packages.json" with { type: "json" };

export const llamuxVersion: string = packageJson.version;
export const llamaCppRelease: string = nativePackages.llamaCppRelease;
/** The commit of the pinned llama.cpp source bundle (checked against the clone by scripts/fetch-native.sh). */
export const llamaCppCommit: string = nativePackages.llamaCppCommit;
