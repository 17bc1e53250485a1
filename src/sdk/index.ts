// The package entry: `import { LLM, SamplingParams, ModelRunner, ... } from "llamux"`.
export { LLM, type LLMOptions, type RequestOutput, type CompletionOutput, type PromptInput, type ChatInput, type ChatOptions, type BatchOptions } from "./llm.ts";
export { SamplingParams, type SamplingParamsInit } from "./sampling-params.ts";
export { DisposedError } from "./local-model.ts";
export { UnsupportedContentError, type ChatInputMessage, type ChatInputPart } from "./chat-input.ts";
