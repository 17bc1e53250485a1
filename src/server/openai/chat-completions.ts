// POST /v1/chat/completions: the body becomes a chat spec (messages, tools, structured output, the option
// table's parameters), the orchestrator runs it, and the choices' events are written as one
// chat.completion or an SSE stream of chat.completion.chunk.
import type { Context } from "hono";
import { parseToolChoice } from "../../generation/chat-output.ts";
import type { ChatMessage } from "../../chat/types.ts";
import type { ChatSpec } from "../../generation/chat-spec.ts";
import type { OptionValues } from "../../options/values.ts";
import { runChat } from "../../generation/run-chat.ts";
import { outputConstraintOf } from "./structured-output.ts";
import { badRequest } from "../api-error.ts";
import { readJsonBody, validate } from "../validation.ts";
import type { ServerDeps } from "../deps.ts";
import { refuseEmbeddingModel, serverRun, servedModel } from "../chat-request.ts";
import type { ServedModel } from "../model-service.ts";
import type { Profile } from "../profiles/profile.ts";
import { imageUrlReader } from "../request-images.ts";
import { audioReader } from "../request-audio.ts";
import { chatCompletionSchema, type ChatCompletionRequest } from "./schemas.ts";
import { openAiEventStream } from "./sse.ts";
import { streamChatChoices } from "./chat-stream.ts";
import { chatMcpServers, mcpChatCompletion } from "./chat-mcp.ts";
import { requestOptions } from "../request-options.ts";
import { requestSchedule } from "../session-hint.ts";
import { ttlKeepAlive } from "../ttl.ts";
import { draftModelOverrides } from "./draft-model.ts";
import { requestedMaxTokens } from "./max-tokens.ts";
import type { ResponseExtension } from "./response-extension.ts";
import { chatCompletionBody, checkChoiceOptions, completionId, stopStrings, toChatMessages, toUsage } from "./translate.ts";

/** `{ [key]: value }`, or nothing when the value is unset (exactOptionalPropertyTypes). */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** The body's parameters (the profile's defaults < the model's own < the body's), checked before any image is read. */
export function chatCompletionOptions(profile: Profile, model: ServedModel, body: ChatCompletionRequest): OptionValues {
  const options = requestOptions(profile, model, body, stopStrings(body.stop));
  checkChoiceOptions(body, body.n ?? 1, options);
  if (body.top_logprobs && !body.logprobs) throw badRequest("when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs");
  return options;
}

/** The chat spec of a body, its messages read already and its options from chatCompletionOptions. */
export function chatCompletionSpec(profile: Profile, model: ServedModel, body: ChatCompletionRequest, messages: ChatMessage[], options: OptionValues): ChatSpec {
  const logprobs = body.logprobs ? body.top_logprobs ?? 0 : undefined;
  const requested = requestedMaxTokens(profile, body.max_tokens, 1);
  return {
    prompt: {
      kind: "conversation", messages, ...optional("layers", model.stored),
      addGenerationPrompt: body.add_generation_prompt ?? true, ...optional("templateVariables", body.chat_template_kwargs),
    },
    output: {
      tools: body.tools ?? [], parallelToolCalls: body.parallel_tool_calls ?? true,
      ...optional("toolChoice", parseToolChoice(body.tool_choice)), ...optional("constraint", outputConstraintOf(body)),
    },
    options,
    limit: { ...optional("maxTokens", body.max_completion_tokens ?? requested), overflow: profile.replyOverflow },
    n: body.n ?? 1, ...optional("logprobs", logprobs),
    // A client that asks for special tokens to be skipped gets call markers skipped too.
    ...(options.skipSpecialTokens === true ? { keepSpecialTokens: false } : {}),
    // llama-server's return_progress: prompt_progress chunks while a streamed prompt is processed
    ...(body.stream && body.return_progress ? { promptProgress: true } : {}),
  };
}

/** `extension` adds a profile's own fields to non-streamed bodies (LM Studio's /api/v0 stats). */
export function chatCompletions(deps: ServerDeps, extension?: ResponseExtension) {
  return async function chatCompletionsHandler(c: Context) {
    const arrived = performance.now();
    // MCP tool entries (configured servers the server runs) are taken out before the schema reads function tools.
    const { body: plain, requests: mcpServers } = chatMcpServers(await readJsonBody(c));
    const body = validate(chatCompletionSchema, plain);
    const model = deps.models.resolve(body.model);
    const options = chatCompletionOptions(deps.profile, model, body);
    refuseEmbeddingModel(deps, model);

    // Images are read (and refused) before the model loads.
    const messages = await toChatMessages(body.messages, imageUrlReader(deps, model), audioReader(deps, model));
    const load = { extra: draftModelOverrides(deps, body.draft_model), keepAlive: ttlKeepAlive(deps.profile, body.ttl) };
    const schedule = requestSchedule(c.req.raw.headers, body);
    if (mcpServers.length > 0) {
      const specOf = (request: ChatCompletionRequest) => ({ ...chatCompletionSpec(deps.profile, model, request, messages, options), ...schedule });
      return mcpChatCompletion(c, deps, { body, model, requests: mcpServers, specOf, arrived, load });
    }
    const spec = { ...chatCompletionSpec(deps.profile, model, body, messages, options), ...schedule };
    const withLogprobs = spec.logprobs !== undefined;
    const { engine, prompt, maxTokens, choices } = await runChat(servedModel(deps, model, load), spec, serverRun(deps, model, c.req.raw.signal, arrived));
    const id = completionId("chatcmpl");
    const created = Math.floor(Date.now() / 1000);
    const reportUsage = (usage: ReturnType<typeof toUsage>) =>
      c.set("usage", { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens });

    if (!body.stream) {
      const results = await Promise.all(choices.map((choice) => choice.collect()));
      // The engine's count: with images, it includes each image's tokens.
      const usage = toUsage(results[0]!.usage.promptTokens, results.map((r) => r.usage));
      reportUsage(usage);
      const extra = extension?.({ engine, choices: results, maxTokens }) ?? {};
      return c.json({ ...chatCompletionBody(id, created, model.id, results, usage, withLogprobs), ...extra });
    }
    return openAiEventStream(c, async (send, keepAlive) => {
      const context = {
        id, created, model: model.id, profile: deps.profile, withLogprobs, returnProgress: body.return_progress === true, keepAlive,
      };
      const usages = await streamChatChoices(choices, context, send);
      if (!usages) return;
      const usage = toUsage(usages[0]?.promptTokens ?? prompt.tokens.length, usages);
      reportUsage(usage);
      if (body.stream_options?.include_usage) await send({ id, object: "chat.completion.chunk", created, model: model.id, choices: [], usage });
    });
  };
}
