// POST /v1/chat/completions: translates the body into the shared chat path (template, n choices,
// output parsing) and answers with one chat.completion or an SSE stream of chat.completion.chunk.
import type { Context } from "hono";
import { parseToolChoice } from "../../generation/chat-output.ts";
import { startChatRequest } from "../chat-request.ts";
import { outputConstraintOf } from "./structured-output.ts";
import { badRequest } from "../api-error.ts";
import { readJsonBody, validate } from "../validation.ts";
import type { ServerDeps } from "../deps.ts";
import { observeChoices } from "../observe.ts";
import { imageUrlReader } from "../request-images.ts";
import { audioReader } from "../request-audio.ts";
import { chatCompletionSchema } from "./schemas.ts";
import { checkContextLength } from "./context-check.ts";
import { openAiEventStream } from "./sse.ts";
import { streamChatChoices } from "./chat-stream.ts";
import { loadOverrides, modelDefaults } from "./ollama-options.ts";
import { ttlKeepAlive } from "./ttl.ts";
import { draftModelOverrides } from "./draft-model.ts";
import { requestedMaxTokens } from "./max-tokens.ts";
import type { ResponseExtension } from "./response-extension.ts";
import { chatCompletionBody, checkChoiceOptions, checkMinTokens, completionId, generationFields, toChatMessages, toSamplerSettings, toUsage } from "./translate.ts";

/** `{ [key]: value }`, or nothing when the value is unset (exactOptionalPropertyTypes). */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** `extension` adds a profile's own fields to non-streamed bodies (LM Studio's /api/v0 stats). */
export function chatCompletions(deps: ServerDeps, extension?: ResponseExtension) {
  return async function chatCompletionsHandler(c: Context) {
    const arrived = performance.now();
    const body = validate(chatCompletionSchema, await readJsonBody(c));
    const n = body.n ?? 1;
    const model = deps.models.resolve(body.model);
    const defaults = modelDefaults(model);
    const sampling = toSamplerSettings(body, deps.profile, defaults.sampling);
    checkChoiceOptions(body, n, sampling);
    if (body.top_logprobs && !body.logprobs) throw badRequest("when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs");

    // Images are read (and refused) before the model loads.
    const messages = await toChatMessages(body.messages, imageUrlReader(deps, model), audioReader(deps, model));
    const constraint = outputConstraintOf(body);
    const logprobs = body.logprobs ? body.top_logprobs ?? 0 : undefined;
    const { engine, prompt, maxTokens, choices } = await startChatRequest(deps, {
      model, defaults, messages,
      load: { ...loadOverrides(deps.profile, body), ...draftModelOverrides(deps, body.draft_model) }, ...optional("keepAlive", ttlKeepAlive(deps.profile, body.ttl)),
      output: {
        tools: body.tools ?? [], parallelToolCalls: body.parallel_tool_calls ?? true,
        ...optional("toolChoice", parseToolChoice(body.tool_choice)), ...optional("constraint", constraint),
      },
      addGenerationPrompt: body.add_generation_prompt ?? true,
      ...optional("templateVariables", body.chat_template_kwargs),
      limit(promptTokens, context) {
        const requested = requestedMaxTokens(deps.profile, body.max_tokens, 1);
        const limit = body.max_completion_tokens ?? (requested === "unlimited" ? undefined : requested ?? defaults.maxTokens);
        checkContextLength(deps.profile, promptTokens, limit, context);
        checkMinTokens(body, limit);
        return limit;
      },
      sampling, fields: generationFields(body, undefined, logprobs), keepSpecialTokens: body.skip_special_tokens !== true,
      n, signal: c.req.raw.signal, onDone: observeChoices(deps, model.id, arrived),
    });
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
      return c.json({ ...chatCompletionBody(id, created, model.id, results, usage, logprobs !== undefined), ...extra });
    }
    return openAiEventStream(c, async (send) => {
      const usages = await streamChatChoices(choices, { id, created, model: model.id, profile: deps.profile, withLogprobs: logprobs !== undefined }, send);
      if (!usages) return;
      const usage = toUsage(usages[0]?.promptTokens ?? prompt.tokens.length, usages);
      reportUsage(usage);
      if (body.stream_options?.include_usage) await send({ id, object: "chat.completion.chunk", created, model: model.id, choices: [], usage });
    });
  };
}
