// Finds the GGUF file an SDK caller names: a path, a name in the model store, or a Hugging Face
// `<org>/<model>` id (pulled into the store on first use, as `llamux pull hf.co/<org>/<model>` would).
import { existsSync, statSync } from "node:fs";
import { siblingProjector } from "../vision/projector-file.ts";
import { ModelStore } from "../store/model-store.ts";
import { isHubId, pullHubId, pullModel } from "../store/pull.ts";
import { logger } from "../log.ts";

const log = logger("sdk");

export interface ModelSourceOptions {
  /** The model store's root; default LLAMUX_MODELS, else ~/.llamux/models. */
  storeRoot?: string;
  /** The Hugging Face hub's address and token (default HF_ENDPOINT and HF_TOKEN). */
  hub?: { endpoint?: string; token?: string };
}

/** A model's GGUF file and, for a stored model, the prompt layers of its manifest (Ollama TEMPLATE and SYSTEM). */
export interface ModelSource {
  modelPath: string;
  /** The vision projector: a sibling mmproj-*.gguf of a path, or a stored model's projector layer. */
  projectorPath?: string;
  template?: string;
  system?: string;
}

/** The model `model` names; throws `Cannot load model "x": …` when it names nothing usable. */
export async function resolveModel(model: string, options: ModelSourceOptions = {}): Promise<ModelSource> {
  if (!model) throw new TypeError("Cannot load model: no model was named");
  if (existsSync(model)) {
    if (!statSync(model).isFile()) throw new Error(`Cannot load model "${model}": not a file`);
    const projectorPath = siblingProjector(model);
    return { modelPath: model, ...(projectorPath ? { projectorPath } : {}) };
  }
  const store = ModelStore.open(options.storeRoot ? { root: options.storeRoot } : {});
  const stored = safeResolve(store, model);
  if (stored) return stored;
  if (isHubId(model) || model.startsWith("hf.co/") || model.startsWith("huggingface.co/")) {
    log.info(`pulling "${model}" from the Hugging Face hub into ${store.root}`);
    const pullOptions = options.hub ? { hub: options.hub } : {};
    const name = isHubId(model) ? await pullHubId(store, model, pullOptions) : await pullModel(store, model, pullOptions);
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
      ...(resolved.projectorPath !== undefined ? { projectorPath: resolved.projectorPath } : {}),
      ...(resolved.template !== undefined ? { template: resolved.template } : {}),
      ...(resolved.system !== undefined ? { system: resolved.system } : {}),
    };
  } catch {
    return undefined; // not a valid model name
  }
}
