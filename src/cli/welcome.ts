// What `llamux` alone prints: a few lines on what to do next, for someone who just downloaded it.
import { ModelStore } from "../store/model-store.ts";

export function welcomeText(): string {
  let installed = "";
  try {
    const store = ModelStore.open();
    const count = store.list().length;
    installed = count > 0 ? `You have ${count} model${count === 1 ? "" : "s"} in ${store.root} ("llamux list").\n\n` : "";
  } catch {
    // an unreadable store is doctor's business, not the greeting's
  }
  return `llamux serves local language models the way Ollama, vLLM and LM Studio do.

${installed}Get a model, then talk to it:
  llamux pull hf.co/LiquidAI/LFM2-1.2B-GGUF          download a GGUF model from Hugging Face
  llamux create mymodel -f Modelfile                 or make one from a local GGUF file
  llamux run hf.co/LiquidAI/LFM2-1.2B-GGUF           chat in the terminal (also: llamux run ./model.gguf)

Serve it to your apps:
  llamux serve --profile all                         Ollama API on :11434, vLLM on :8000, LM Studio on :1234
  curl http://127.0.0.1:11434/v1/chat/completions -d '{"model": "hf.co/LiquidAI/LFM2-1.2B-GGUF",
       "messages": [{"role": "user", "content": "Hello"}]}'

"llamux --help" lists every command; "llamux doctor" checks this machine.`;
}
