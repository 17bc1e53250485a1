// LM Studio's extra fields on /api/v0 completions: `stats` (speed, seconds to the first token,
// seconds generating, and why generation stopped in LM Studio's camelCase words), `model_info` and
// `runtime`. Durations are seconds, as LM Studio reports them.
import { llamaCppRelease } from "../../version.ts";
import type { FinishedChoice, ResponseExtension } from "../openai/response-extension.ts";
import { modelFacts } from "./model-facts.ts";
import { basename } from "node:path";
import type { ModelInfo, RequestUsage } from "../../engine/types.ts";

/** LM Studio's LLMPredictionStopReason for a finished choice. */
export function lmStudioStopReason(choice: FinishedChoice, maxTokens: number | undefined): string {
  switch (choice.finishReason) {
    case "tool_calls":
      return "toolCalls";
    case "cancelled":
      return "userStopped";
    case "length":
      // No limit asked for, or one not reached: the context ran out first.
      return maxTokens !== undefined && choice.usage.completionTokens >= maxTokens ? "maxPredictedTokensReached" : "contextLengthReached";
    default:
      return choice.stop !== undefined ? "stopStringFound" : "eosFound";
  }
}

/** The runtime LM Studio names (`llama.cpp-mac-arm64-apple-metal-advsimd`), here llama.cpp on this platform. */
export const runtimeInfo = {
  name: `llama.cpp-${process.platform}-${process.arch}`,
  version: llamaCppRelease,
  supported_formats: ["gguf"],
};

/**
 * LM Studio's speculative-decoding stats: drafted, accepted and rejected token counts (ignored drafts,
 * ones LM Studio drops unverified, do not occur here: every draft token is verified).
 */
export function draftStats(speculative: ModelInfo["speculative"], usage: RequestUsage): Record<string, unknown> {
  if (!speculative || usage.draftTokens === undefined) return {};
  const accepted = usage.acceptedDraftTokens ?? 0;
  return {
    draft_model: speculative.draftModelPath ? basename(speculative.draftModelPath, ".gguf") : `ngram`,
    total_draft_tokens_count: usage.draftTokens,
    accepted_draft_tokens_count: accepted,
    rejected_draft_tokens_count: usage.draftTokens - accepted,
    ignored_draft_tokens_count: 0,
  };
}

export const lmStudioStats: ResponseExtension = ({ engine, choices, maxTokens }) => {
  const first = choices[0]!;
  const generationSeconds = first.usage.decodeMs / 1000;
  const facts = modelFacts({ path: engine.info.path, ...(engine.info.vision ? { projectorPath: engine.info.vision.projectorPath } : {}) });
  return {
    stats: {
      tokens_per_second: generationSeconds > 0 ? first.usage.completionTokens / generationSeconds : 0,
      time_to_first_token: first.usage.timeToFirstTokenMs / 1000,
      generation_time: generationSeconds,
      stop_reason: lmStudioStopReason(first, maxTokens),
      ...draftStats(engine.info.speculative, first.usage),
    },
    model_info: { arch: engine.info.architecture, quant: facts.quantization, format: "gguf", context_length: engine.info.contextPerSequence },
    runtime: runtimeInfo,
  };
};
