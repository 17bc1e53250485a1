// The package entry: `import { LLM, SamplingParams, ModelRunner, ... } from "llamux"`.
export { LLM, type LLMOptions, type RequestOutput, type CompletionOutput, type PromptInput, type ChatInput, type ChatOptions, type BatchOptions, type SpeechParams, type SpeechOutput } from "./llm.ts";
export { SamplingParams, type SamplingParamsInit } from "./sampling-params.ts";
export { DisposedError } from "./local-model.ts";
export { UnsupportedContentError, type ChatInputMessage, type ChatInputPart } from "./chat-input.ts";
export { ModelRunner, type ModelRunnerOptions } from "./model-runner.ts";
export { Conversation, type GenerateResponseExtras } from "./conversation.ts";
export { ChatMessage, ChatMessageContent, TextContent, ImageContent, AudioContent, type ChatRole, type ChatMessageInit, type PlainChatMessage } from "./chat-message.ts";
export { LeapStr, LeapNum, LeapInt, LeapBool, LeapArr, LeapObj, LeapNull, type LeapFunctionParameterType, type JsonSchema } from "./function-types.ts";
export { LeapFunction, LeapFunctionParameter, InvalidFunctionError, checkFunctionName, type LeapFunctionInit, type LeapFunctionParameterInit } from "./functions.ts";
export { validateFunctionCall, type LeapFunctionCall } from "./function-call-validation.ts";
export { GenerationOptions, DefaultFunctionCallParser, AlternateFunctionCallParser, type FunctionCallParser, type ToolChoice, type GenerationOptionsInit } from "./generation-options.ts";
export { MessageResponse, Chunk, ReasoningChunk, AudioSample, FunctionCalls, McpToolResult, Complete, GenerationError, type GenerationStats, type CompletionFinishReason } from "./message-response.ts";
export { UnknownToolChoiceError } from "./tool-choice.ts";
export { RemoteModelRunner, type RemoteModelRunnerOptions } from "./remote-model-runner.ts";
export { McpServerError } from "./mcp-server-error.ts";
export type { McpServerInit, McpServerOptions } from "./mcp-server.ts";
