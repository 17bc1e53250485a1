// Pulls a model into the store by name: `hf.co/...` (or `huggingface.co/...`) from the Hugging Face
// hub, anything else from an Ollama registry. Both report progress in /api/pull's shape.
import { pullFromHub } from "./hub/hub-pull.ts";
import { UnknownTagError } from "./hub/quantization.ts";
import { HttpStatusError } from "./http.ts";
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

/** `<org>/<model>` (optionally `:tag`) with no host: how vLLM names a Hugging Face repository. */
export function isHubId(name: string): boolean {
  return /^[\w.-]+\/[\w.-]+(?::[\w.-]+)?$/.test(name) && !name.endsWith(".gguf") && !/^library\//i.test(name);
}

/**
 * Pulls a vLLM-style `<org>/<model>[:tag]` id from the hub: the repository itself when it holds GGUF
 * files, else its `<model>-GGUF` sibling, since such ids usually name the original weights and GGUF
 * conversions are published beside them. Returns the name the model is stored under.
 */
export async function pullHubId(store: ModelStore, id: string, options: PullOptions = {}): Promise<string> {
  const [repo, tag] = id.split(":") as [string, string | undefined];
  const suffix = tag ? `:${tag}` : "";
  try {
    return await pullModel(store, `hf.co/${repo}${suffix}`, options);
  } catch (error) {
    if (/-gguf$/i.test(repo) || !hasNoGguf(error)) throw error;
    try {
      return await pullModel(store, `hf.co/${repo}-GGUF${suffix}`, options);
    } catch (second) {
      if (!hasNoGguf(second)) throw second;
      throw new Error(`Cannot pull "${id}": neither "${repo}" nor "${repo}-GGUF" on the Hugging Face hub has a GGUF file to pull (${(error as Error).message}; ${(second as Error).message})`);
    }
  }
}

/** The repository is missing (the hub answers 401 for those without a token) or holds no GGUF file. */
function hasNoGguf(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (e instanceof UnknownTagError) return e.available.length === 0;
    if (e instanceof HttpStatusError) return e.status === 404 || e.status === 401;
  }
  return false;
}
