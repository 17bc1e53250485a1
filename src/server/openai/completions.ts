// POST /v1/completions: the legacy text completion. No chat template: each prompt (text or token ids) is a
// raw prompt the orchestrator runs, constrained as chat is; a list of prompts gives len(prompt) × n choices,
// numbered prompt by prompt.
import type { Context } from "hono";
import { z } from "zod";
import { badRequest } from "../api-error.ts";
import { readJsonBody, validate } from "../validation.ts";
import type { ServerDeps } from "../deps.ts";
import { samplingFields } from "./schemas.ts";
import { outputConstraintOf, structuredOutputFields } from "./structured-output.ts";
import type { ChatSpec, ReplyLimit } from "../../generation/chat-spec.ts";
import type { OptionValues } from "../../options/values.ts";
import { runChat, type RunningChat } from "../../generation/run-chat.ts";
import { refuseEmbeddingModel, serverRun, servedModel } from "../chat-request.ts";
import { requestOptions } from "../request-options.ts";
import { requestSchedule } from "../session-hint.ts";
import { errorChunk, finishReasonOf, stopReasonOf, streamChoices, type ChunkFormat } from "./stream-choices.ts";
import { openAiEventStream } from "./sse.ts";
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

type CompletionRequest = z.infer<typeof completionSchema>;

/** Each prompt as text or token ids. */
function promptList(prompt: CompletionRequest["prompt"]): Array<string | number[]> {
  if (typeof prompt === "string") return [prompt];
  if (typeof prompt[0] === "number") return [prompt as number[]];
  return prompt as string[] | number[][];
}

/** The chat spec of one prompt of a body: the model reads it as it is, and its text is the reply, nothing parsed out. */
function completionSpec(prompt: string | number[], body: CompletionRequest, options: OptionValues, limit: ReplyLimit): ChatSpec {
  const constraint = outputConstraintOf(body);
  return {
    // A text prompt gets BOS as the vocabulary asks, as vLLM's tokenizer adds it.
    prompt: typeof prompt === "string" ? { kind: "text", text: prompt, addSpecial: true } : { kind: "tokens", tokens: prompt },
    output: { reasoning: false, readCallsAs: "none", ...(constraint ? { constraint } : {}) },
    options, limit, n: body.n ?? 1,
    ...(body.logprobs != null ? { logprobs: body.logprobs } : {}),
  };
}

/** Every prompt's run; when one is refused, the choices the others started are cancelled and its error thrown. */
async function runAll(starts: Array<Promise<RunningChat>>): Promise<RunningChat[]> {
  const settled = await Promise.allSettled(starts);
  const refused = settled.find((result) => result.status === "rejected");
  const runs = settled.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  if (!refused) return runs;
  await Promise.all(runs.flatMap((run) => run.choices.map((choice) => choice.stream.cancel())));
  throw refused.reason;
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
    checkChoiceOptions(body, n, options);
    refuseEmbeddingModel(deps, model, "completions");
    const requested = requestedMaxTokens(deps.profile, body.max_tokens, 0);
    if (requested === 0 && !body.echo) throw badRequest("max_tokens must be at least 1 unless echo is set", "max_tokens");
    // LM Studio's -1 ("unlimited"): until the context is full. max_tokens 0 with echo: the one token the engine
    // generates at least is left out of the text.
    const limit: ReplyLimit = {
      ...(requested !== undefined ? { maxTokens: requested === 0 ? 1 : requested } : {}), overflow: deps.profile.replyOverflow, defaultMaxTokens: 16,
    };

    const load = { extra: draftModelOverrides(deps, body.draft_model), keepAlive: ttlKeepAlive(deps.profile, body.ttl) };
    const run = serverRun(deps, model, c.req.raw.signal, arrived);
    const schedule = requestSchedule(c.req.raw.headers);
    const runs = await runAll(promptList(body.prompt).map((prompt) =>
      runChat(servedModel(deps, model, load), { ...completionSpec(prompt, body, options, limit), ...schedule }, run)));
    const { engine, maxTokens } = runs[0]!;
    const choices = runs.flatMap(({ choices }) => choices.map((choice) => choice.stream));
    const logprobs = body.logprobs ?? undefined;
    const id = completionId("cmpl");
    const created = Math.floor(Date.now() / 1000);
    const promptTokens = runs.reduce((sum, { prompt }) => sum + prompt.tokens.length, 0);
    const echoOf = (index: number) => (body.echo ? runs[Math.floor(index / n)]!.prompt.text : "");
    if (!body.stream) {
      const results = await Promise.all(choices.map((choice) => choice.collect()));
      const usage = toUsage(promptTokens, results.map((r) => r.usage));
      c.set("usage", { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens });
      return c.json({
        id, object: "text_completion", created, model: model.id,
        choices: results.map((r, index) => ({
          index,
          text: echoOf(index) + (requested === 0 ? "" : r.text),
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
