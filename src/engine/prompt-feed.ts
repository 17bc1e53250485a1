// Puts admitted prompts' tokens into a step's batch, as the step planner shares the step's prompt tokens
// out between them (planning/step-budget.ts): each prompt's run ends at its next image (an image step of
// its own), at its next recurrent mark (a state to save: sequence-memory.ts markCut) and where it parts
// from another session's prompt (a state for the next session).
import type { TokenBatch } from "../../ffi/llama.ts";
import { allocatePrefill, prefillOrder, type PrefillView } from "./planning/step-budget.ts";
import type { ActiveRequest, SequenceSlot } from "./sequence.ts";
import type { SequenceMemory } from "./sequence-memory.ts";

export interface PromptFeed {
  /** The requests still processing their prompt at the step's start. */
  prefillingThisStep: ActiveRequest[];
  /** Those that took tokens in this step. */
  progressing: ActiveRequest[];
}

/**
 * Adds up to `tokens` prompt tokens of `prompts` (admitted slots whose text prompt is being processed) to
 * the batch, the last prompt token of a prompt with logits. A step that finishes a prompt and holds at
 * least `flushTokens` takes no further prompt tokens.
 */
export function feedPrompts(batch: TokenBatch, prompts: readonly SequenceSlot[], memory: SequenceMemory, tokens: number, flushTokens: number): PromptFeed {
  const views: PrefillView[] = prompts.map((slot) => {
    const active = slot.active!;
    let end = Math.min(active.textEnd(), memory.markCut(active));
    if (active.sharedPrefixEnd > active.nextPromptIndex) end = Math.min(end, active.sharedPrefixEnd);
    return { left: active.prompt.length - active.nextPromptIndex, run: end - active.nextPromptIndex, passedOver: active.stepsPassedOver };
  });
  const taken = allocatePrefill(views, prefillOrder(views, batch.capacity), {
    tokens, batchFree: batch.free, batchCount: batch.count, flushTokens,
  });
  const progressing: ActiveRequest[] = [];
  prompts.forEach((slot, i) => {
    const active = slot.active!;
    const count = taken[i]!;
    if (count === 0) return;
    progressing.push(active);
    const end = active.nextPromptIndex + count;
    for (let p = active.nextPromptIndex; p < end; p++) {
      const last = p === active.prompt.length - 1;
      const index = batch.add(active.prompt[p]!, slot.cached.length, slot.seq, last);
      slot.cached.push(active.prompt[p]!);
      if (last) slot.outputIndex = index;
    }
    active.nextPromptIndex = end;
  });
  if (progressing.length > 0) {
    for (const slot of prompts) {
      const active = slot.active!;
      if (progressing.includes(active)) active.stepsPassedOver = 0;
      else active.stepsPassedOver++;
    }
  }
  return { prefillingThisStep: prompts.map((slot) => slot.active!), progressing };
}
