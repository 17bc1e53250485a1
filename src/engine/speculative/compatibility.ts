// Whether a draft model can propose tokens for a target: llama.cpp's own rule
// (common_speculative_are_compatible) plus size: a draft as large as the target cannot pay off.
import type { LlamaModel } from "../../../ffi/llama.ts";

/** llama.cpp's limits: vocabularies may differ by a few added tokens at the end, and ids below 5 are not compared. */
const MAX_VOCAB_SIZE_DIFFERENCE = 128;
const FIRST_COMPARED_TOKEN = 5;

/** Why the draft cannot serve the target, or undefined when it can. */
export function draftIncompatibility(target: LlamaModel, draft: LlamaModel): string | undefined {
  const t = target.vocab, d = draft.vocab;
  if (t.type !== d.type) return `its vocabulary type (${d.type}) differs from the target's (${t.type})`;
  if (t.addBos !== d.addBos || (t.addBos && t.bos !== d.bos)) return `its BOS token (${d.addBos ? d.bos : "none"}) differs from the target's (${t.addBos ? t.bos : "none"})`;
  if (t.addEos !== d.addEos || (t.addEos && t.eos !== d.eos)) return `its EOS token (${d.addEos ? d.eos : "none"}) differs from the target's (${t.addEos ? t.eos : "none"})`;
  if (Math.abs(t.size - d.size) > MAX_VOCAB_SIZE_DIFFERENCE) return `its vocabulary has ${d.size} tokens and the target's ${t.size}`;
  const shared = Math.min(t.size, d.size);
  for (let token = FIRST_COMPARED_TOKEN; token < shared; token++) {
    if (t.text(token) !== d.text(token)) return `token ${token} is "${d.text(token)}" in the draft and "${t.text(token)}" in the target`;
  }
  if (draft.parameterCount > target.parameterCount) {
    return `it is larger than the target (${draft.parameterCount} parameters against ${target.parameterCount})`;
  }
  return undefined;
}
