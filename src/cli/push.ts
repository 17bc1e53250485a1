// `llamux push NAME`: uploads a model from the store to an Ollama registry with a progress bar, as
// `ollama push` does (blobs the registry lacks, then the manifest). It reads the store itself rather than
// asking a server, so it needs no server and works whatever a server allows.
import { parseArgs } from "node:util";
import { formatModelName, DEFAULT_HOST, parseModelName } from "../store/model-name.ts";
import { pushToRegistry } from "../store/registry/registry-push.ts";
import { openStore } from "./model-store-access.ts";
import { terminalProgress } from "./terminal/progress-bar.ts";
import { UsageError } from "../usage-error.ts";
import { helpFlag, renderHelp, type Flags, type HelpPage } from "./help-layout.ts";
import { envVar } from "../config.ts";

export const pushFlags = {
  insecure: { type: "boolean", help: "talk to the registry over plain http" },
  ...helpFlag,
} as const satisfies Flags;

export const pushPage: HelpPage = {
  usage: ["llamux push NAME [--insecure]"],
  description: `Uploads a model from the store to an Ollama registry: the blobs the registry does not have yet, then the
manifest. NAME is [HOST/]NAMESPACE/MODEL[:TAG]; without HOST it goes to OLLAMA_REGISTRY (default
https://registry.ollama.ai, where NAMESPACE is your ollama.com user name). Rename a model first with
"llamux cp". Token requests are signed with an ed25519 key (Ollama's): add its public key to your
account on the registry.`,
  flags: pushFlags,
  environment: ["OLLAMA_REGISTRY", "LLAMUX_REGISTRY_KEY"].map(envVar),
};

export const pushHelp = renderHelp(pushPage);

export async function pushCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args, allowPositionals: true, options: pushFlags,
  });
  if (values.help) {
    console.log(pushHelp);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError("push needs one model name");
  const name = positionals[0]!;
  const progress = terminalProgress();
  try {
    await pushToRegistry(openStore(), name, { onProgress: progress.onProgress, insecure: values.insecure ?? false });
  } finally {
    progress.finish();
  }
  const parsed = parseModelName(name);
  const where = parsed.host === DEFAULT_HOST && !process.env.OLLAMA_REGISTRY
    ? `https://ollama.com/${parsed.namespace}/${parsed.model}${parsed.tag === "latest" ? "" : `:${parsed.tag}`}`
    : formatModelName(parsed);
  console.log(`\nYou can find your model at:\n\n\t${where}\n`);
  return 0;
}
