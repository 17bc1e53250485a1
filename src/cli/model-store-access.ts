// The model store as the CLI opens it: profile a's rules (LLAMUX_MODELS, else OLLAMA_MODELS, else ~/.llamux/models).
import { ModelStore } from "../store/model-store.ts";

export function openStore(): ModelStore {
  return ModelStore.open({ profile: "a" });
}
