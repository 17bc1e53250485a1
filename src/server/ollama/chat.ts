// POST /api/chat: native messages through the shared chat path (the model's template, tools, output
// parsing), answered as Ollama's ChatResponse chunks. A chat longer than the context loses its oldest
// messages first.
import type { Context } from "hono";
import type { ChatMessage } from "../../chat/types.ts";
import type { ToolCallParserName } from "../../generation/chat-output.ts";
import type { ChatSpec } from "../../generation/chat-spec.ts";
import type { OptionValues } from "../../options/values.ts";
import type { Capability } from "../../store/capabilities.ts";
import { runChat } from "../../generation/run-chat.ts";
import { engineSettings } from "../../options/engine-settings.ts";
import { serverRun, servedModel } from "../chat-request.ts";
import { requestSchedule } from "../session-hint.ts";
import { formatConstraint } from "./format.ts";
import { badRequest } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";
import type { ServedModel } from "../model-service.ts";
import { readJsonBody, validate } from "../validation.ts";
import { base64Images } from "../request-images.ts";
import { nativeToolCall, toChatMessages, toToolDefinitions } from "./chat-messages.ts";
import { ollamaContextErrors, timedLoad } from "./fit-context.ts";
import { metricsFields, type RequestTiming } from "./metrics.ts";
import { audioReader } from "../request-audio.ts";
import { doesNotSupport, findModel, keepAliveOf, loadOrUnload } from "./model-request.ts";
import { nativeOptions } from "./options.ts";
import { thinkSetting } from "../../generation/model-prompt.ts";
import { checkCapabilities } from "./capability-checks.ts";
import { capabilitiesOf } from "./model-description.ts";
import { nativeLogprobs, respondNative, type NativeShape, type ResponsePiece } from "./respond.ts";
import { chatSchema, type ChatRequestBody } from "./schemas.ts";
import { ollamaToolChoice } from "./tool-choice.ts";

/** How /api/chat shapes a piece of output: the assistant message, its thinking and tool calls, and logprobs. */
export function chatShape(model: string, withLogprobs: boolean, timing: RequestTiming): NativeShape {
  const head = () => ({ model, created_at: new Date().toISOString() });
  const message = (piece: ResponsePiece) => ({
    role: "assistant",
    content: piece.content,
    ...(piece.thinking ? { thinking: piece.thinking } : {}),
    ...(piece.toolCalls.length ? { tool_calls: piece.toolCalls.map(({ index, call }) => nativeToolCall(index, call)) } : {}),
  });
  const logprobs = (piece: ResponsePiece) => (withLogprobs && piece.logprobs.length ? { logprobs: nativeLogprobs(piece.logprobs) } : {});
  return {
    chunk: (piece) => ({ ...head(), message: message(piece), done: false, ...logprobs(piece) }),
    final: (piece, finished) => ({
      ...head(), message: message(piece), done_reason: finished.doneReason, done: true, ...metricsFields(timing, finished.usage), ...logprobs(piece),
    }),
  };
}

/** What the spec needs beside the body: the model's capabilities (from its file) and the server's --tool-call-parser. */
export interface ChatSpecContext {
  capabilities: Capability[];
  toolCallParser?: ToolCallParserName | undefined;
}

/**
 * An /api/chat body as a chat spec, its messages read already and its options from nativeOptions. A
 * request that needs what the model cannot do (tools, thinking) is refused; an unusable tool_choice is
 * ignored, as Ollama ignores the field.
 */
export function ollamaChatSpec(model: ServedModel, body: ChatRequestBody, messages: ChatMessage[], options: OptionValues, context: ChatSpecContext): ChatSpec {
  const constraint = formatConstraint(body.format);
  const requestedTools = toToolDefinitions(body.tools);
  const toolChoice = ollamaToolChoice(body.tool_choice, { tools: requestedTools, constrained: constraint !== undefined, parser: context.toolCallParser });
  const capabilities = checkCapabilities(model, { tools: requestedTools.length > 0 && toolChoice !== "none", think: body.think }, context.capabilities);
  return {
    prompt: { kind: "conversation", messages, layers: model.stored ?? {}, ...thinkSetting(body.think), overflow: body.truncate === false ? "refuse" : "drop-oldest" },
    output: {
      tools: requestedTools, reasoning: capabilities.includes("thinking") && body.think !== false,
      ...(toolChoice ? { toolChoice } : {}), ...(constraint ? { constraint } : {}),
    },
    options,
    limit: { overflow: "allow" },
    ...(body.logprobs === true ? { logprobs: body.top_logprobs ?? 0 } : {}),
  };
}

export function chat(deps: ServerDeps) {
  return async function chatHandler(c: Context) {
    const arrived = performance.now();
    const body = validate(chatSchema, await readJsonBody(c));
    if (!body.model) throw badRequest("model is required", "model");
    const model = findModel(deps, body.model, "quoted");
    if (deps.models.embeds(model)) throw doesNotSupport(model, "chat");
    const keepAlive = keepAliveOf(deps, model, body.keep_alive);
    const options = nativeOptions(model, body);

    const messages = body.messages ?? [];
    if (messages.length === 0) {
      const doneReason = await loadOrUnload(deps, model, engineSettings(options).load, keepAlive);
      return c.json({ model: body.model, created_at: new Date().toISOString(), message: { role: "assistant", content: "" }, done_reason: doneReason, done: true });
    }
    const chatMessages = toChatMessages(messages, (images) => base64Images(deps, model, images, () => doesNotSupport(model, "vision")), (clips) => {
      if (!deps.models.hasAudio(model)) throw doesNotSupport(model, "audio");
      const read = audioReader(deps, model);
      return clips.map((clip, i) => read({ data: clip }, `audio ${i + 1}`));
    });
    const spec = {
      ...ollamaChatSpec(model, body, chatMessages, options, { capabilities: capabilitiesOf(model), toolCallParser: deps.toolCallParser }),
      ...requestSchedule(c.req.raw.headers),
    };
    let loaded = arrived;
    const { choices: [choice] } = await runChat(timedLoad(servedModel(deps, model, { keepAlive }), (at) => (loaded = at)), spec,
      serverRun(deps, model, c.req.raw.signal, arrived)).catch(ollamaContextErrors);
    return respondNative(c, choice!, chatShape(body.model, spec.logprobs !== undefined, { arrived, loaded }), body.stream !== false);
  };
}
