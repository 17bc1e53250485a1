// Pulls a model into the store by name: `hf.co/...` (or `huggingface.co/...`) from the Hugging Face
// hub, anything else from an Ollama registry. Both report progress in /api/pull's shape.
import { pullFromHub } from "./hub/hub-pull.ts";
import { isHubName, parseModelName } from "./model-name.ts";
import type { ModelStore } from "./model-store.ts";
import type { ProgressHandler } from "./pull-progress.ts";
import { pullFromRegistry } from "./registry/registry-pull.ts";

export interface PullOptions {
  onProgress?: ProgressHandler;
  signal?: AbortSignal;
  /** attempts after the first when a download's connection drops (default 5) */
  retries?: number;
  /** the Hugging Face hub's address and token (default HF_ENDPOINT and HF_TOKEN) */
  hub?: { endpoint?: string; token?: string };
  /** the Ollama registry for names without a host (default OLLAMA_REGISTRY, else registry.ollama.ai) */
  registry?: string;
}

/** Pulls `name` into `store` and returns the name it is stored under (`hf.co/org/repo:Q4_K_M`, `llama3.2:latest`). */
export async function pullModel(store: ModelStore, name: string, options: PullOptions = {}): Promise<string> {
  const parsed = parseModelName(name);
  try {
    return isHubName(parsed) ? await pullFromHub(store, parsed, options) : await pullFromRegistry(store, parsed, options);
  } catch (error) {
    throw new Error(`Cannot pull "${name}": ${(error as Error).message}`, { cause: error });
  }
}
