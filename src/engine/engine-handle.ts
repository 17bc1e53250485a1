// What the generation path needs of a loaded model, whatever hosts its engine: the server's child
// process (EngineProcess) or the SDK's worker. Routes and the SDK call this, never the host directly.
// It lives beside its implementers, so the engine needs nothing from the layers above it.
import type { EngineEvent, GenerateRequest, ModelInfo, PromptInput, SpeechRequest, SpeechStream } from "./types.ts";

export interface TokenizeOptions {
  /** Add BOS/EOS as the vocabulary asks. Default: true. */
  addSpecial?: boolean;
  /** Let text like "<|im_start|>" become control tokens. Default: true. */
  parseSpecial?: boolean;
}

export interface EngineHandle {
  readonly info: ModelInfo;
  tokenize(text: string, options?: TokenizeOptions): Promise<number[]>;
  detokenize(tokens: number[]): Promise<string>;
  /** The prompt's length as a request's usage would count it (each image's or clip's embedding tokens included), without running it. */
  countPromptTokens(prompt: PromptInput): Promise<number>;
  /** Streams a request's events; leaving the loop early or aborting `signal` cancels it. */
  generate(request: Omit<GenerateRequest, "id">, signal?: AbortSignal): AsyncGenerator<EngineEvent>;
  /**
   * Speaks a text on a speech model (info.speech); rejects through `done` (and the chunks) with an
   * EngineError on any other. Aborting `signal` stops it between frames.
   */
  speak(request: SpeechRequest, options?: { signal?: AbortSignal }): SpeechStream;
}
