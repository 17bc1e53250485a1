// The remote entry: `import { RemoteModelRunner, ... } from "llamux/remote"`. The Conversation API against
// any OpenAI-compatible server, llamux included, with nothing of the in-process engine: it runs on Node
// 20 or later, Bun and Deno, and in browser bundles (where registering an MCP server is refused).
export { RemoteModelRunner, type RemoteModelRunnerOptions } from "./remote-model-runner.ts";
export { Conversation, type GenerateResponseExtras } from "./conversation.ts";
export { ChatMessage, ChatMessageContent, TextContent, ImageContent, AudioContent, type ChatRole, type ChatMessageInit, type PlainChatMessage } from "./chat-message.ts";
export { LeapStr, LeapNum, LeapInt, LeapBool, LeapArr, LeapObj, LeapNull, type LeapFunctionParameterType, type JsonSchema } from "./function-types.ts";
export { LeapFunction, LeapFunctionParameter, InvalidFunctionError, checkFunctionName, type LeapFunctionInit, type LeapFunctionParameterInit } from "./functions.ts";
export { validateFunctionCall, type LeapFunctionCall } from "./function-call-validation.ts";
export { GenerationOptions, DefaultFunctionCallParser, AlternateFunctionCallParser, type FunctionCallParser, type ToolChoice, type GenerationOptionsInit } from "./generation-options.ts";
export { MessageResponse, Chunk, ReasoningChunk, AudioSample, FunctionCalls, McpToolResult, Complete, GenerationError, type GenerationStats, type CompletionFinishReason } from "./message-response.ts";
export { UnknownToolChoiceError } from "./tool-choice.ts";
export { McpServerError } from "./mcp-server-error.ts";
export type { McpServerInit, McpServerOptions } from "./mcp-server.ts";
