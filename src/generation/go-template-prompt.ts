// A prompt rendered with an Ollama TEMPLATE (a Go template) and tokenized part by part: template text
// with special tokens recognised, values from the conversation as plain text, so "<|im_end|>" typed
// by a user stays text. BOS is added only when the template did not write it, unless `addSpecial` says otherwise.
// Images become media markers in their messages' text, as for Jinja templates.
import { tokenizerAddsBos } from "../chat/template.ts";
import type { OllamaPromptInput } from "../chat/go-template/ollama-prompt.ts";
import { runOffThread } from "../chat/off-thread/pool.ts";
import type { RenderedPrompt } from "./chat.ts";
import { placeImages, withoutMediaMarkers } from "./prompt-images.ts";
import type { EngineHandle } from "../engine/engine-handle.ts";

export async function renderGoTemplatePrompt(engine: EngineHandle, template: string, input: OllamaPromptInput, addSpecial?: boolean): Promise<RenderedPrompt> {
  const { messages, images } = await placeImages(input.messages, engine.info);
  // Rendered off the serving thread: a template is untrusted input and may run long.
  const parts = await runOffThread("goPrompt", { template, prompt: { ...input, messages } });
  const text = parts.map((part) => part.text).join("");
  const tokens: number[] = [];
  let first = true;
  for (const part of parts) {
    const partText = withoutMediaMarkers(part.text, engine.info);
    if (!partText) continue;
    const addsBos = first && (addSpecial ?? tokenizerAddsBos(text, engine.info.bosText));
    // one by one: spreading a long prompt's tokens as arguments overflows the stack
    for (const token of await engine.tokenize(partText, { addSpecial: addsBos, parseSpecial: !part.fromData })) tokens.push(token);
    first = false;
  }
  return { text, tokens, ...(images.length ? { images } : {}) };
}
