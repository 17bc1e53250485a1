// A request as it enters an engine: its prompt tokenized (images decoded and placed at their markers),
// checked against the context, and given its sampler chain. What cannot run is refused here, with an
// EngineError, before it waits in any queue.
import type { LlamaModel } from "../../ffi/llama.ts";
import { InvalidGrammarError } from "../../ffi/sampler.ts";
import { ActiveRequest, type EventSink } from "./sequence.ts";
import { EngineError, type GenerateRequest, type PromptInput } from "./types.ts";
import { checkRequestTokenIds, checkTokenIds } from "./token-ids.ts";
import { StructuredOutputError } from "../chat/structured/errors.ts";
import type { ImageEncoder } from "./image-encoder.ts";
import { disposeImages, promptTokenCount, tokenizeWithImages, type ImageSpan } from "./image-prompt.ts";
import type { TokenOutput } from "./token-output.ts";

export interface IntakeContext {
  model: LlamaModel;
  images: ImageEncoder | undefined;
  output: TokenOutput;
  /** Most tokens one sequence may hold. */
  limit: number;
}

/** The request, ready to wait for a sequence; throws EngineError for one that cannot run. */
export function intakeRequest({ model, images: encoder, output, limit }: IntakeContext, request: GenerateRequest, emit: EventSink): ActiveRequest {
  // Checked here as well as in the client: one request's bad id must not fail the whole batch.
  checkRequestTokenIds(request, model.vocab.size);
  const { tokens: prompt, images } = tokenizePrompt(model, encoder, request);
  const active = new ActiveRequest(request, prompt, emit, images);
  try {
    if (prompt.length === 0) throw new EngineError("invalid_request", "Cannot generate from an empty prompt");
    if (request.forcedTokens?.length === 0) throw new EngineError("invalid_request", "Cannot score an empty list of forced tokens");
    const cells = Math.max(prompt.length, active.promptTokenCount);
    if (cells >= limit) {
      throw new EngineError("context_overflow", `Prompt of ${cells} tokens does not fit the context of ${limit} tokens per sequence`);
    }
    const forced = request.forcedTokens?.length ?? 0;
    if (cells + forced > limit) {
      throw new EngineError("context_overflow",
        `Prompt of ${cells} tokens and ${forced} tokens to score do not fit the context of ${limit} tokens per sequence`);
    }
    active.sampler = output.createSampler(request, (request.minTokens ?? 0) > 0);
  } catch (error) {
    disposeImages(images);
    if (error instanceof InvalidGrammarError || error instanceof StructuredOutputError) throw new EngineError("invalid_request", error.message);
    throw error;
  }
  return active;
}

/**
 * How many tokens the prompt takes, as a request's usage counts them (each image's or audio clip's
 * embedding tokens included), without running it: its media are decoded and placed, not encoded.
 */
export function countPromptTokens(model: LlamaModel, encoder: ImageEncoder | undefined, prompt: PromptInput): number {
  if (typeof prompt.prompt !== "string") checkTokenIds(prompt.prompt, model.vocab.size, "the prompt");
  const { tokens, images } = tokenizePrompt(model, encoder, prompt);
  try {
    return promptTokenCount(tokens, images);
  } finally {
    disposeImages(images);
  }
}

/** The request's prompt as tokens, with its images decoded and placed at their media markers. */
function tokenizePrompt(model: LlamaModel, encoder: ImageEncoder | undefined, request: PromptInput): { tokens: Int32Array; images: ImageSpan[] } {
  const options = { addSpecial: request.addSpecial ?? true, parseSpecial: request.parseSpecial ?? true };
  if (!request.images?.length) {
    const tokens = typeof request.prompt === "string" ? model.vocab.tokenize(request.prompt, options) : Int32Array.from(request.prompt);
    return { tokens, images: [] };
  }
  if (!encoder) throw new EngineError("invalid_request", `Model "${model.path}" has no vision support: no projector is loaded, so it cannot take images`);
  if (typeof request.prompt !== "string") throw new EngineError("invalid_request", "Cannot place images in a prompt of token ids: send text with media markers");
  return tokenizeWithImages(encoder.projector, request.prompt, request.images, options);
}
