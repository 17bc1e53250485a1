// POST /v1/chat/completions: renders the model's chat template, runs n choices as parallel sequences,
// and answers with one chat.completion or an SSE stream of chat.completion.chunk.
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { renderChatTemplate, CHATML_TEMPLATE } from "../../chat/template.ts";
import type { EngineEvent, GenerateRequest } from "../../engine/types.ts";
import { ApiError, badRequest } from "../api-error.ts";
import { readJsonBody, validate } from "../validation.ts";
import type { ServerDeps } from "../deps.ts";
import { chatCompletionSchema } from "./schemas.ts";
import { checkContextLength } from "./context-check.ts";
import { startChoices, type ChoiceStream } from "./choices.ts";
import {
  chatChunk, chatCompletionBody, completionId, stopStrings, toChatMessages, toSamplerSettings, toUsage,
} from "./translate.ts";

export function chatCompletions(deps: ServerDeps) {
  return async function chatCompletionsHandler(c: Context) {
    const arrived = performance.now();
    const body = validate(chatCompletionSchema, await readJsonBody(c));
    const n = body.n ?? 1;
    const sampling = toSamplerSettings(body, deps.profile);
    if (n > 1 && sampling.temperature === 0) throw badRequest("n must be 1 when using greedy sampling", "n");
    if (body.stream_options && !body.stream) throw badRequest("Stream options can only be defined when `stream=True`.", "stream_options");
    if (body.top_logprobs && !body.logprobs) throw badRequest("when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs");
    if (body.logprobs) throw new ApiError(501, "logprobs are not supported yet", { param: "logprobs" });

    const model = deps.models.resolve(body.model);
    const engine = await deps.models.engine(model);
    const info = engine.info;
    if (info.embeddings) throw badRequest(`Model "${model.id}" is an embedding model and does not support chat`, "model");

    const prompt = renderChatTemplate(info.chatTemplate ?? CHATML_TEMPLATE, toChatMessages(body.messages), {
      ...(body.tools ? { tools: body.tools } : {}),
      addGenerationPrompt: body.add_generation_prompt ?? true,
      bosToken: info.bosText,
      eosToken: info.eosText,
      ...(body.chat_template_kwargs ? { variables: body.chat_template_kwargs } : {}),
    });
    // A template that writes BOS itself must not get a second one from the tokenizer.
    const addSpecial = !(info.bosText && prompt.startsWith(info.bosText));
    const tokens = await engine.tokenize(prompt, { addSpecial, parseSpecial: true });
    const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? undefined;
    checkContextLength(deps.profile, tokens.length, maxTokens, info.contextPerSequence);

    const request: Omit<GenerateRequest, "id"> = {
      prompt: tokens,
      ...(maxTokens !== undefined ? { maxTokens } : {}),
      stop: stopStrings(body.stop),
      includeStopString: body.include_stop_str_in_output ?? false,
      ignoreEos: body.ignore_eos ?? false,
      sampling,
    };
    const id = completionId("chatcmpl");
    const created = Math.floor(Date.now() / 1000);
    const signal = c.req.raw.signal;
    // The first event of every choice is awaited before answering, so that a refusal (busy queue,
    // failed prompt) is a proper HTTP error rather than an error inside a 200 stream.
    const choices = await startChoices(engine, request, n, signal, (done) => deps.observer?.finished({
      model: model.id, usage: done.usage, finishReason: done.finishReason, e2eSeconds: (performance.now() - arrived) / 1000,
    }));

    if (!body.stream) {
      const results = await Promise.all(choices.map((choice) => choice.collect()));
      return c.json(chatCompletionBody(id, created, model.id, results, toUsage(tokens.length, results.map((r) => r.usage))));
    }

    const includeUsage = body.stream_options?.include_usage ?? false;
    return streamSSE(c, async (stream) => {
      const send = (data: unknown) => stream.writeSSE({ data: JSON.stringify(data) });
      for (let i = 0; i < n; i++) await send(chatChunk(id, created, model.id, i, { role: "assistant", content: "" }));
      const usages = await Promise.all(choices.map((choice, index) => pipeChoice(choice, index, send, (delta, finish, extra) =>
        chatChunk(id, created, model.id, index, delta, finish, extra))));
      if (usages.includes(undefined)) {
        await stream.writeSSE({ data: "[DONE]" });
        return;
      }
      if (includeUsage) {
        const usage = toUsage(tokens.length, usages.map((u) => u!));
        await send({ id, object: "chat.completion.chunk", created, model: model.id, choices: [], usage });
      }
      await stream.writeSSE({ data: "[DONE]" });
    });
  };
}

type ChunkBuilder = (delta: Record<string, unknown>, finish: string | null, extra?: Record<string, unknown>) => unknown;

/** Streams one choice's events as chunks; resolves with its usage, or undefined after an error chunk. */
async function pipeChoice(choice: ChoiceStream, _index: number, send: (data: unknown) => Promise<void>, chunk: ChunkBuilder) {
  for await (const event of choice.events()) {
    if (event.type === "token") {
      if (event.text) await send(chunk({ content: event.text }, null));
    } else if (event.type === "done") {
      const finish = event.finishReason === "cancelled" ? "abort" : event.finishReason;
      await send(chunk({}, finish, { stop_reason: event.stop ?? null }));
      return event.usage;
    } else {
      await send(errorChunk(event));
      return undefined;
    }
  }
  return undefined;
}

function errorChunk(event: Extract<EngineEvent, { type: "error" }>) {
  return { error: { message: event.message, type: "InternalServerError", param: null, code: 500 } };
}
