// Finds the GGUF file an SDK caller names: a path, a name in the model store, or a Hugging Face
// `<org>/<model>` id (pulled into the store on first use, as `llamux pull hf.co/<org>/<model>` would).
import { existsSync, statSync } from "node:fs";
import { ModelStore } from "../store/model-store.ts";
import { pullModel } from "../store/pull.ts";
import { logger } from "../log.ts";

const log = logger("sdk");

export interface ModelSourceOptions {
  /** The model store's root; default LLAMUX_MODELS, else ~/.llamux/models. */
  storeRoot?: string;
  /** The Hugging Face hub's address and token (default HF_ENDPOINT and HF_TOKEN). */
  hub?: { endpoint?: string; token?: string };
}

/** `<org>/<model>` (optionally `:tag`) with no host: a hub id rather than an Ollama registry name. */
function isHubId(name: string): boolean {
  return /^[\w.-]+\/[\w.-]+(?::[\w.-]+)?$/.test(name) && !name.endsWith(".gguf");
}

/** A model's GGUF file and, for a stored model, the prompt layers of its manifest (Ollama TEMPLATE and SYSTEM). */
export interface ModelSource {
  modelPath: string;
  template?: string;
  system?: string;
}

/** The model `model` names; throws `Cannot load model "x": …` when it names nothing usable. */
export async function resolveModel(model: string, options: ModelSourceOptions = {}): Promise<ModelSource> {
  if (!model) throw new TypeError("Cannot load model: no model was named");
  if (existsSync(model)) {
    if (!statSync(model).isFile()) throw new Error(`Cannot load model "${model}": not a file`);
    return { modelPath: model };
  }
  const store = ModelStore.open(options.storeRoot ? { root: options.storeRoot } : {});
  const stored = safeResolve(store, model);
  if (stored) return stored;
  if (isHubId(model) || model.startsWith("hf.co/") || model.startsWith("huggingface.co/")) {
    const hubName = isHubId(model) ? `hf.co/${model}` : model;
    log.info(`pulling "${hubName}" into ${store.root}`);
    const name = await pullModel(store, hubName, options.hub ? { hub: options.hub } : {});
    const pulled = safeResolve(store, name);
    if (pulled) return pulled;
  }
  throw new Error(`Cannot load model "${model}": no such file, and no model of that name in the store (${store.root})`);
}

function safeResolve(store: ModelStore, name: string): ModelSource | undefined {
  try {
    const resolved = store.resolve(name);
    if (!resolved) return undefined;
    return {
      modelPath: resolved.modelPath,
      ...(resolved.template !== undefined ? { template: resolved.template } : {}),
      ...(resolved.system !== undefined ? { system: resolved.system } : {}),
    };
  } catch {
    return undefined; // not a valid model name
  }
}
