// POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API (what Claude Code speaks)
// as a thin translation onto the shared chat path, on every profile.
import type { Context } from "hono";
import { renderChatRequest, startChatRequest, type ChatPromptSpec } from "../chat-request.ts";
import type { ServerDeps } from "../deps.ts";
import { namedEventStream } from "../named-sse.ts";
import { observeChoices } from "../observe.ts";
import { modelDefaults } from "../openai/ollama-options.ts";
import { toSamplerSettings } from "../openai/translate.ts";
import { replyLimit } from "../reply-limit.ts";
import { imageUrlReader } from "../request-images.ts";
import { readJsonBody, validate } from "../validation.ts";
import { chatMessages, outputRequest, thinkingVariables } from "./messages-input.ts";
import { contentBlocks, messageBody, messagesUsage, newMessageId, stopReasonOf } from "./messages-output.ts";
import { MessageEventWriter } from "./messages-stream.ts";
import { countTokensSchema, messagesSchema, type CountTokensRequest } from "./schema.ts";

/** What decides the prompt, for a reply and for a token count alike. */
async function promptSpec(deps: ServerDeps, body: CountTokensRequest): Promise<ChatPromptSpec> {
  const model = deps.models.resolve(body.model);
  const output = outputRequest(body);
  // Images are read (and refused) before the model loads.
  const messages = await chatMessages(body, imageUrlReader(deps, model));
  return { model, defaults: modelDefaults(model), messages, output, templateVariables: thinkingVariables(body) };
}

export function messages(deps: ServerDeps) {
  return async function messagesHandler(c: Context) {
    const arrived = performance.now();
    const body = validate(messagesSchema, await readJsonBody(c));
    const budget = body.thinking?.type === "enabled" ? body.thinking.budget_tokens : undefined;
    const spec = await promptSpec(deps, body);
    const sampling = toSamplerSettings({ temperature: body.temperature ?? null, top_p: body.top_p ?? null, top_k: body.top_k ?? null }, deps.profile, spec.defaults.sampling);
    const stopSequences = body.stop_sequences ?? [];
    const { prompt, choices } = await startChatRequest(deps, {
      ...spec,
      limit: (promptTokens, context) => replyLimit(deps.profile, promptTokens, context, body.max_tokens),
      sampling, fields: { stop: stopSequences },
      ...(budget !== undefined ? { reasoningBudget: budget } : {}),
      signal: c.req.raw.signal, onDone: observeChoices(deps, spec.model.id, arrived),
    });
    const choice = choices[0]!;
    const id = newMessageId();
    const report = (usage: { promptTokens: number; completionTokens: number }) =>
      c.set("usage", { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens });

    if (!body.stream) {
      const result = await choice.collect();
      report(result.usage);
      return c.json(messageBody(id, spec.model.id, contentBlocks(result), stopReasonOf(result, stopSequences), messagesUsage(result.usage)));
    }
    return namedEventStream(c, async (send) => {
      const writer = new MessageEventWriter(id, spec.model.id, stopSequences, send);
      await writer.start(prompt.tokens.length);
      for await (const event of choice.events()) {
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
    const { prompt } = await renderChatRequest(deps, await promptSpec(deps, body));
    return c.json({ input_tokens: prompt.tokens.length });
  };
}
