// POST /v1/chat/completions: renders the model's chat template, runs n choices as parallel sequences,
// and answers with one chat.completion or an SSE stream of chat.completion.chunk.
import type { Context } from "hono";
import { renderChatTemplate, tokenizerAddsBos, CHATML_TEMPLATE } from "../../chat/template.ts";
import { badRequest } from "../api-error.ts";
import { readJsonBody, validate } from "../validation.ts";
import type { ServerDeps } from "../deps.ts";
import { chatCompletionSchema } from "./schemas.ts";
import { checkContextLength } from "./context-check.ts";
import { finishReasonOf, startChoices, stopReasonOf, streamChoices, type ChunkFormat } from "./choices.ts";
import { openAiEventStream } from "./sse.ts";
import { observeChoices } from "./observe.ts";
import { loadOverrides } from "./ollama-options.ts";
import {
  chatChunk, chatCompletionBody, chatLogprobs, checkChoiceOptions, completionId, generationFields, toChatMessages, toSamplerSettings, toUsage,
} from "./translate.ts";

export function chatCompletions(deps: ServerDeps) {
  return async function chatCompletionsHandler(c: Context) {
    const arrived = performance.now();
    const body = validate(chatCompletionSchema, await readJsonBody(c));
    const n = body.n ?? 1;
    const sampling = toSamplerSettings(body, deps.profile);
    checkChoiceOptions(body, n, sampling);
    if (body.top_logprobs && !body.logprobs) throw badRequest("when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs");

    const model = deps.models.resolve(body.model);
    if (deps.models.embeds(model)) throw badRequest(`Model "${model.id}" is an embedding model and does not support chat`, "model");
    const engine = await deps.models.engine(model, loadOverrides(deps.profile, body));
    const info = engine.info;
    const prompt = renderChatTemplate(info.chatTemplate ?? CHATML_TEMPLATE, toChatMessages(body.messages), {
      ...(body.tools ? { tools: body.tools } : {}),
      addGenerationPrompt: body.add_generation_prompt ?? true,
      bosToken: info.bosText,
      eosToken: info.eosText,
      ...(body.chat_template_kwargs ? { variables: body.chat_template_kwargs } : {}),
    });
    const addSpecial = tokenizerAddsBos(prompt, info.bosText);
    const tokens = await engine.tokenize(prompt, { addSpecial, parseSpecial: true });
    const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? undefined;
    checkContextLength(deps.profile, tokens.length, maxTokens, info.contextPerSequence);

    const logprobs = body.logprobs ? body.top_logprobs ?? 0 : undefined;
    const request = { prompt: tokens, sampling, ...generationFields(body, maxTokens, logprobs) };
    const id = completionId("chatcmpl");
    const created = Math.floor(Date.now() / 1000);
    const choices = await startChoices(engine, [request], n, c.req.raw.signal, observeChoices(deps, model.id, arrived));

    if (!body.stream) {
      const results = await Promise.all(choices.map((choice) => choice.collect()));
      const usage = toUsage(tokens.length, results.map((r) => r.usage));
      c.set("usage", { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens });
      return c.json(chatCompletionBody(id, created, model.id, results, usage, logprobs !== undefined));
    }

    const format: ChunkFormat = {
      text: (index, text, entries) => chatChunk(id, created, model.id, index, { content: text }, null,
        logprobs !== undefined ? { logprobs: chatLogprobs(entries) } : {}),
      finish: (index, done) => chatChunk(id, created, model.id, index, {}, finishReasonOf(done.finishReason), { stop_reason: stopReasonOf(done) }),
    };
    return openAiEventStream(c, async (send) => {
      for (let i = 0; i < n; i++) await send(chatChunk(id, created, model.id, i, { role: "assistant", content: "" }));
      const usages = await streamChoices(choices, format, send);
      if (!usages) return;
      const usage = toUsage(tokens.length, usages);
      c.set("usage", { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens });
      if (body.stream_options?.include_usage) await send({ id, object: "chat.completion.chunk", created, model: model.id, choices: [], usage });
    });
  };
}
