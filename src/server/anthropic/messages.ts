// POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API (what Claude Code speaks)
// as a thin translation onto the shared chat path, on every profile.
import type { Context } from "hono";
import type { ChatSpec, ReplyLimit } from "../../generation/chat-spec.ts";
import { renderChat, runChat } from "../../generation/run-chat.ts";
import { refuseEmbeddingModel, serverRun, servedModel } from "../chat-request.ts";
import type { ServedModel } from "../model-service.ts";
import type { ServerDeps } from "../deps.ts";
import { namedEventStream } from "../named-sse.ts";
import { agentContextErrors } from "../reply-limit.ts";
import { requestOptions } from "../request-options.ts";
import { imageUrlReader } from "../request-images.ts";
import { readJsonBody, validate } from "../validation.ts";
import { chatMessages, outputRequest, thinkingVariables } from "./messages-input.ts";
import { contentBlocks, messageBody, messagesUsage, newMessageId, stopReasonOf } from "./messages-output.ts";
import { MessageEventWriter } from "./messages-stream.ts";
import { countTokensSchema, messagesSchema, type CountTokensRequest } from "./schema.ts";

/** What decides the prompt, for a reply and for a token count alike. */
async function chatSpec(deps: ServerDeps, body: CountTokensRequest, model: ServedModel, limit: ReplyLimit, stop: string[] = []): Promise<ChatSpec> {
  const output = outputRequest(body);
  // Images are read (and refused) before the model loads.
  const messages = await chatMessages(body, imageUrlReader(deps, model));
  return {
    prompt: { kind: "conversation", messages, ...(model.stored ? { layers: model.stored } : {}), templateVariables: thinkingVariables(body) },
    output,
    options: requestOptions(deps.profile, model, body, stop),
    limit,
  };
}

export function messages(deps: ServerDeps) {
  return async function messagesHandler(c: Context) {
    const arrived = performance.now();
    const body = validate(messagesSchema, await readJsonBody(c));
    const budget = body.thinking?.type === "enabled" ? body.thinking.budget_tokens : undefined;
    // Interleaved thinking allows a budget at or above max_tokens: the reply still ends within max_tokens.
    const model = deps.models.resolve(body.model);
    refuseEmbeddingModel(deps, model);
    const stopSequences = body.stop_sequences ?? [];
    const spec = await chatSpec(deps, body, model, { maxTokens: body.max_tokens, overflow: "clamp" }, stopSequences);
    const { prompt, choices } = await runChat(servedModel(deps, model), { ...spec, ...(budget !== undefined ? { reasoningBudget: budget } : {}) },
      serverRun(deps, model, c.req.raw.signal, arrived)).catch(agentContextErrors(deps.profile));
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
    const { prompt } = await renderChat(servedModel(deps, model), await chatSpec(deps, body, model, { overflow: "clamp" }), serverRun(deps, model, c.req.raw.signal, performance.now()));
    return c.json({ input_tokens: prompt.tokens.length });
  };
}
