// Builds an engine's speculation from its load options: checks them, loads the draft model beside the
// target (refusing an incompatible one), and checks that the target can take rejected drafts back.
import type { LlamaContext, LlamaModel, KvCacheType } from "../../../ffi/llama.ts";
import type { Drafter } from "./drafter.ts";
import { ModelDrafter } from "./model-drafter.ts";
import { NgramDrafter } from "./ngram-drafter.ts";
import { resolveSpeculativeOptions, type SpeculativeOptions } from "./options.ts";
import { Speculation } from "./speculation.ts";
import { EngineError } from "../types.ts";

export interface DraftLoadSettings {
  gpuLayers: number;
  threads: number;
  flashAttention?: "auto" | "on" | "off";
  kvCacheType?: KvCacheType;
  /** Most tokens one target sequence holds (the target's cells may be shared by its sequences). */
  contextPerSequence: number;
}

/** Throws EngineError "invalid_request" for settings or a draft model that cannot work with the target. */
export function createSpeculation(options: SpeculativeOptions, target: LlamaModel, context: LlamaContext, settings: DraftLoadSettings): Speculation {
  let resolved;
  try {
    resolved = resolveSpeculativeOptions(options);
  } catch (error) {
    throw new EngineError("invalid_request", (error as Error).message);
  }
  if (target.isRecurrentOrHybrid && context.recurrentRollback < resolved.maxDraftTokens) {
    throw new EngineError("invalid_request", `Cannot use speculative decoding with "${target.path}": llama.cpp cannot roll back the recurrent state of architecture "${target.architecture}"`);
  }
  let drafter: Drafter;
  if (resolved.method === "ngram") {
    drafter = new NgramDrafter(resolved.ngramMax, resolved.ngramMin);
  } else {
    drafter = ModelDrafter.load(resolved.draftModelPath!, target, {
      sequences: context.sequences,
      contextPerSequence: settings.contextPerSequence,
      batchSize: context.batchSize,
      threads: settings.threads,
      // the draft decodes on the engine's thread between the target's decodes: one set of workers serves both
      threadsOf: context,
      gpuLayers: settings.gpuLayers,
      ...(settings.flashAttention ? { flashAttention: settings.flashAttention } : {}),
      ...(settings.kvCacheType ? { kvCacheType: settings.kvCacheType } : {}),
    }, resolved.minDraftProbability);
  }
  // llama.cpp splits a recurrent or hybrid target's batch by sequence: drafts must line up across sequences
  return new Speculation(drafter, resolved.maxDraftTokens, resolved.method, resolved.draftModelPath, target.isRecurrentOrHybrid);
}
