// The model store as the CLI opens it: Ollama's rules, as its CLI (LLAMUX_MODELS, else OLLAMA_MODELS, else ~/.llamux/models).
import { ModelStore } from "../store/model-store.ts";

export function openStore(): ModelStore {
  return ModelStore.open({ ollamaModels: true });
}
