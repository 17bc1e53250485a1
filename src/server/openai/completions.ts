// POST /v1/completions: the legacy text completion. No chat template; a list of prompts gives
// len(prompt) × n choices, numbered prompt by prompt.
import type { Context } from "hono";
import { z } from "zod";
import { badRequest } from "../api-error.ts";
import { tokenIdProblem } from "../../engine/token-ids.ts";
import { readJsonBody, validate } from "../validation.ts";
import type { ServerDeps } from "../deps.ts";
import { samplingFields } from "./schemas.ts";
import { outputConstraintOf, structuredOutputFields } from "./structured-output.ts";
import { constraintGrammar } from "../../chat/structured/constraint.ts";
import { ContextLimitError } from "../../generation/chat-spec.ts";
import { promptFits } from "../../generation/prompt-fit.ts";
import { replyTokens } from "../../generation/run-chat.ts";
import { engineSettings } from "../../options/engine-settings.ts";
import { requestOptions } from "../request-options.ts";
import { requestSchedule } from "../session-hint.ts";
import { startChoices } from "../../generation/choices.ts";
import { errorChunk, finishReasonOf, stopReasonOf, streamChoices, type ChunkFormat } from "./stream-choices.ts";
import { openAiEventStream } from "./sse.ts";
import { observeChoices } from "../observe.ts";
import { ttlKeepAlive } from "../ttl.ts";
import { draftModelOverrides } from "./draft-model.ts";
import { requestedMaxTokens } from "./max-tokens.ts";
import type { ResponseExtension } from "./response-extension.ts";
import { checkChoiceOptions, completionId, stopStrings, textLogprobs, toUsage } from "./translate.ts";

export const completionSchema = z.object({
  model: z.string().optional(),
  prompt: z.union([
    z.string(), z.array(z.string()).min(1), z.array(z.number().int().min(0)).min(1), z.array(z.array(z.number().int().min(0)).min(1)).min(1),
  ]).describe("text, texts, token ids, or lists of token ids"),
  max_tokens: z.number().int().min(-1).nullable().optional().describe("default 16; -1 is no limit on profile c"),
  echo: z.boolean().optional(),
  logprobs: z.number().int().min(0).max(20).nullable().optional(),
  suffix: z.string().nullable().optional(),
  ...samplingFields,
  // vLLM constrains text completions as it does chat (structured_outputs, guided_*, response_format)
  ...structuredOutputFields,
});

/** Each prompt as text or token ids. */
function promptList(prompt: z.infer<typeof completionSchema>["prompt"]): Array<string | number[]> {
  if (typeof prompt === "string") return [prompt];
  if (typeof prompt[0] === "number") return [prompt as number[]];
  return prompt as string[] | number[][];
}

/** `extension` adds a profile's own fields to non-streamed bodies (LM Studio's /api/v0 stats). */
export function completions(deps: ServerDeps, extension?: ResponseExtension) {
  return async function completionsHandler(c: Context) {
    const arrived = performance.now();
    const body = validate(completionSchema, await readJsonBody(c));
    if (body.suffix) throw badRequest("suffix is not supported", "suffix");
    const n = body.n ?? 1;
    const model = deps.models.resolve(body.model);
    const options = requestOptions(deps.profile, model, body, stopStrings(body.stop));
    const settings = engineSettings(options);
    const constraint = outputConstraintOf(body);
    const sampling = { ...settings.sampling, ...(constraint ? { grammar: constraintGrammar(constraint) } : {}) };
    checkChoiceOptions(body, n, options);

    if (deps.models.embeds(model)) throw badRequest(`Model "${model.id}" is an embedding model and does not support completions`, "model");
    const engine = await deps.models.engine(model, { ...settings.load, ...draftModelOverrides(deps, body.draft_model) }, ttlKeepAlive(deps.profile, body.ttl));
    for (const ids of promptList(body.prompt)) {
      const problem = typeof ids === "string" ? undefined : tokenIdProblem(ids, engine.info.vocabularySize, "prompt");
      if (problem) throw badRequest(problem, "prompt");
    }
    const prompts = await Promise.all(promptList(body.prompt).map((p) => (typeof p === "string" ? engine.tokenize(p) : Promise.resolve(p))));
    const texts = await Promise.all(prompts.map((p) => engine.detokenize(p)));
    const requested = requestedMaxTokens(deps.profile, body.max_tokens, 0);
    // LM Studio's -1: generate until the context is full (no limit for the engine).
    const maxTokens = requested === "unlimited" ? undefined : requested ?? settings.generation.maxTokens ?? 16;
    const context = engine.info.contextPerSequence;
    for (const tokens of prompts) {
      if (!promptFits(tokens.length, context)) throw new ContextLimitError("prompt", tokens.length, context);
      replyTokens({ ...(maxTokens !== undefined ? { maxTokens } : {}), overflow: deps.profile.replyOverflow }, undefined, tokens.length, context);
    }
    if (maxTokens === 0 && !body.echo) throw badRequest("max_tokens must be at least 1 unless echo is set", "max_tokens");
    const { minTokens } = settings.generation;
    if (minTokens !== undefined && maxTokens !== undefined && minTokens > maxTokens) throw badRequest(`min_tokens (${minTokens}) must not exceed max_tokens (${maxTokens})`, "min_tokens");

    const logprobs = body.logprobs ?? undefined;
    const fields = { ...settings.generation, ...(logprobs !== undefined ? { logprobs } : {}) };
    delete fields.maxTokens;
    if (maxTokens !== undefined) fields.maxTokens = Math.max(1, maxTokens);
    const schedule = { ...requestSchedule(c.req.raw.headers).schedule, ...settings.schedule };
    const adapter = model.adapter ? { adapter: model.adapter.name } : {};
    const requests = prompts.map((prompt) => ({ prompt, sampling, ...fields, ...adapter, ...(Object.keys(schedule).length ? { schedule } : {}) }));
    const id = completionId("cmpl");
    const created = Math.floor(Date.now() / 1000);
    const choices = await startChoices(engine, requests, n, c.req.raw.signal, observeChoices(deps, model.id, arrived));
    const promptTokens = prompts.reduce((sum, p) => sum + p.length, 0);
    const echoOf = (index: number) => (body.echo ? texts[Math.floor(index / n)]! : "");

    if (!body.stream) {
      const results = await Promise.all(choices.map((choice) => choice.collect()));
      const usage = toUsage(promptTokens, results.map((r) => r.usage));
      c.set("usage", { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens });
      return c.json({
        id, object: "text_completion", created, model: model.id,
        choices: results.map((r, index) => ({
          index,
          text: echoOf(index) + (maxTokens === 0 ? "" : r.text),
          logprobs: logprobs !== undefined ? textLogprobs(r.logprobs, echoOf(index).length) : null,
          finish_reason: finishReasonOf(r.finishReason),
          stop_reason: stopReasonOf(r),
        })),
        usage,
        ...(extension?.({ engine, choices: results, maxTokens }) ?? {}),
      });
    }

    const chunk = (index: number, text: string, extra: Record<string, unknown>) =>
      ({ id, object: "text_completion", created, model: model.id, choices: [{ index, text, logprobs: null, finish_reason: null, ...extra }] });
    const offsets = new Map<number, number>();
    const format: ChunkFormat = {
      text: (index, text, entries) => {
        const offset = offsets.get(index) ?? echoOf(index).length;
        offsets.set(index, offset + text.length);
        return chunk(index, text, logprobs !== undefined ? { logprobs: textLogprobs(entries, offset) } : {});
      },
      finish: (index, done) => chunk(index, "", { finish_reason: finishReasonOf(done.finishReason), stop_reason: stopReasonOf(done) }),
      error: (code, message) => errorChunk(deps.profile, code, message),
    };
    return openAiEventStream(c, async (send, keepAlive) => {
      if (body.echo) for (let i = 0; i < choices.length; i++) await send(chunk(i, echoOf(i), {}));
      const usages = await streamChoices(choices, format, send, keepAlive);
      if (!usages) return;
      const usage = toUsage(promptTokens, usages);
      c.set("usage", { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens });
      if (body.stream_options?.include_usage) await send({ id, object: "text_completion", created, model: model.id, choices: [], usage });
    });
  };
}
