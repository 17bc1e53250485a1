// `llamux pull NAME`: downloads a model into the store from the Hugging Face hub (hf.co/..., huggingface.co/...)
// or an Ollama registry (bare library names), with a progress bar.
import { parseArgs } from "node:util";
import { isHubId, pullHubId, pullModel } from "../store/pull.ts";
import type { ModelStore } from "../store/model-store.ts";
import { openStore } from "./model-store-access.ts";
import { ServerClient } from "./server-client.ts";
import type { PullProgress } from "../store/pull-progress.ts";
import { terminalProgress } from "./terminal/progress-bar.ts";
import { UsageError } from "../usage-error.ts";
import { helpFlag, renderHelp, type Flags, type HelpPage } from "./help-layout.ts";
import { envVar } from "../config.ts";

export const pullFlags = {
  hub: { type: "boolean", help: `NAME is a Hugging Face id as vLLM names models, ORG/NAME[:QUANT]: ORG/NAME, else ORG/NAME-GGUF (what "serve --profile b --model ORG/NAME" pulls; always into this machine's store, as a container's init step does)` },
  insecure: { type: "boolean", help: "accepted as ollama pull takes it; no effect" },
  ...helpFlag,
} as const satisfies Flags;

export const pullPage: HelpPage = {
  usage: ["llamux pull NAME", "llamux pull --hub ORG/NAME[:QUANT]"],
  description: `Downloads a model into the store, resuming an interrupted download and checking its sha256. When a
server answers at LLAMUX_HOST (or OLLAMA_HOST), the server pulls it into its own store.`,
  sections: [{
    title: "Names",
    items: [
      ["hf.co/ORG/REPO[:QUANT]", "a GGUF repository on the Hugging Face hub (also huggingface.co/...); QUANT picks the file (Q4_K_M by default, else the closest), or names it"],
      ["NAME[:TAG], NAMESPACE/NAME", "a model from Ollama's registry (registry.ollama.ai/library by default)"],
    ],
  }],
  flags: pullFlags,
  environment: ["HF_ENDPOINT", "HF_TOKEN", "OLLAMA_REGISTRY"].map(envVar),
};

export const pullHelp = renderHelp(pullPage);

/**
 * Pulls `name` with a progress bar on standard error; returns the name it is stored under. With `hubIds`,
 * an ORG/MODEL name is a Hugging Face repository (as vLLM and LM Studio name models), not an Ollama one.
 */
export async function pullWithProgress(name: string, options: { hubIds?: boolean; store?: ModelStore } = {}): Promise<string> {
  const progress = terminalProgress();
  const store = options.store ?? openStore();
  try {
    return options.hubIds && isHubId(name)
      ? await pullHubId(store, name, { onProgress: progress.onProgress })
      : await pullModel(store, name, { onProgress: progress.onProgress });
  } finally {
    progress.finish();
  }
}

export async function pullCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args, allowPositionals: true, options: pullFlags,
  });
  if (values.help) {
    console.log(pullHelp);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError("pull needs one model name");
  if (values.hub) {
    if (!isHubId(positionals[0]!)) throw new UsageError(`--hub needs a Hugging Face id such as ORG/NAME, got "${positionals[0]}"`);
    await pullWithProgress(positionals[0]!, { hubIds: true });
    return 0;
  }
  const client = await ServerClient.connect();
  if (!client) {
    await pullWithProgress(positionals[0]!);
    return 0;
  }
  const progress = terminalProgress();
  try {
    for await (const event of client.stream<PullProgress>("/api/pull", { model: positionals[0], stream: true })) progress.onProgress(event);
  } finally {
    progress.finish();
  }
  return 0;
}
