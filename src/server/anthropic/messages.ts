// POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API (what Claude Code speaks)
// as a thin translation onto the shared chat path, on every profile.
import type { Context } from "hono";
import type { ChatMessage } from "../../chat/types.ts";
import type { ChatOutputRequest } from "../../generation/chat-output.ts";
import type { ChatSpec, ReplyLimit } from "../../generation/chat-spec.ts";
import { renderChat, runChat } from "../../generation/run-chat.ts";
import { refuseEmbeddingModel, serverRun, servedModel } from "../chat-request.ts";
import type { ServedModel } from "../model-service.ts";
import type { ServerDeps } from "../deps.ts";
import type { Profile } from "../profiles/profile.ts";
import { namedEventStream } from "../named-sse.ts";
import { agentContextErrors } from "../reply-limit.ts";
import { requestOptions } from "../request-options.ts";
import { requestSchedule } from "../session-hint.ts";
import { imageUrlReader } from "../request-images.ts";
import { readJsonBody, validate } from "../validation.ts";
import { chatMessages, outputRequest, thinkingVariables } from "./messages-input.ts";
import { contentBlocks, messageBody, messagesUsage, newMessageId, stopReasonOf } from "./messages-output.ts";
import { MessageEventWriter } from "./messages-stream.ts";
import { countTokensSchema, messagesSchema, type CountTokensRequest, type MessagesRequest } from "./schema.ts";

/**
 * What decides the prompt, for a reply and for a token count alike: the conversation (its images read
 * already), the output request (outputRequest(body), checked before the images are read), the parameters.
 */
function promptSpec(profile: Profile, model: ServedModel, body: CountTokensRequest, messages: ChatMessage[], output: ChatOutputRequest, limit: ReplyLimit, stop: string[] = []): ChatSpec {
  return {
    prompt: { kind: "conversation", messages, ...(model.stored ? { layers: model.stored } : {}), templateVariables: thinkingVariables(body) },
    output,
    options: requestOptions(profile, model, body, stop),
    limit,
  };
}

/** A /v1/messages body as a chat spec: max_tokens clamped to the context's room, stop_sequences, the thinking budget. */
export function messagesSpec(profile: Profile, model: ServedModel, body: MessagesRequest, messages: ChatMessage[], output: ChatOutputRequest): ChatSpec {
  // Interleaved thinking allows a budget at or above max_tokens: the reply still ends within max_tokens.
  const budget = body.thinking?.type === "enabled" ? body.thinking.budget_tokens : undefined;
  const spec = promptSpec(profile, model, body, messages, output, { maxTokens: body.max_tokens, overflow: "clamp" }, body.stop_sequences ?? []);
  return { ...spec, ...(budget !== undefined ? { reasoningBudget: budget } : {}) };
}

/** A /v1/messages/count_tokens body as the chat spec whose prompt is counted. */
export function countTokensSpec(profile: Profile, model: ServedModel, body: CountTokensRequest, messages: ChatMessage[], output: ChatOutputRequest): ChatSpec {
  return promptSpec(profile, model, body, messages, output, { overflow: "clamp" });
}

export function messages(deps: ServerDeps) {
  return async function messagesHandler(c: Context) {
    const arrived = performance.now();
    const body = validate(messagesSchema, await readJsonBody(c));
    const model = deps.models.resolve(body.model);
    refuseEmbeddingModel(deps, model);
    const output = outputRequest(body);
    // Images are read (and refused) before the model loads.
    const spec = { ...messagesSpec(deps.profile, model, body, await chatMessages(body, imageUrlReader(deps, model)), output), ...requestSchedule(c.req.raw.headers, body) };
    const { prompt, choices } = await runChat(servedModel(deps, model), spec, serverRun(deps, model, c.req.raw.signal, arrived)).catch(agentContextErrors(deps.profile));
    const stopSequences = body.stop_sequences ?? [];
    const choice = choices[0]!;
    const id = newMessageId();
    const report = (usage: { promptTokens: number; completionTokens: number }) =>
      c.set("usage", { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens });

    if (!body.stream) {
      const result = await choice.collect();
      report(result.usage);
      return c.json(messageBody(id, model.id, contentBlocks(result), stopReasonOf(result, stopSequences), messagesUsage(result.usage)));
    }
    return namedEventStream(c, async (send) => {
      const writer = new MessageEventWriter(id, model.id, stopSequences, send);
      await writer.start(prompt.tokens.length);
      for await (const event of choice.eventsWithProgress()) {
        if (event.type === "prompt_progress") {
          await writer.ping();
          continue;
        }
        if (event.type === "done") report(event.usage);
        await writer.push(event);
      }
    });
  };
}

/** The prompt's tokens as the model's template renders them (an image's own tokens are not counted). */
export function countTokens(deps: ServerDeps) {
  return async function countTokensHandler(c: Context) {
    const body = validate(countTokensSchema, await readJsonBody(c));
    const model = deps.models.resolve(body.model);
    refuseEmbeddingModel(deps, model);
    const output = outputRequest(body);
    const spec = countTokensSpec(deps.profile, model, body, await chatMessages(body, imageUrlReader(deps, model)), output);
    const { prompt } = await renderChat(servedModel(deps, model), spec, serverRun(deps, model, c.req.raw.signal, performance.now()));
    return c.json({ input_tokens: prompt.tokens.length });
  };
}
