// POST /api/generate: a prompt (templated as one user turn, or raw) through the shared chat path,
// answered as Ollama's GenerateResponse chunks.
import type { Context } from "hono";
import { tokenizerAddsBos } from "../../chat/template.ts";
import type { RenderedPrompt } from "../../generation/chat.ts";
import type { ChatSpec, PromptSpec } from "../../generation/chat-spec.ts";
import type { OptionValues } from "../../options/values.ts";
import type { Capability } from "../../store/capabilities.ts";
import type { EngineHandle } from "../../engine/engine-handle.ts";
import { thinkSetting } from "../../generation/model-prompt.ts";
import { withoutMediaMarkers } from "../../generation/prompt-images.ts";
import { runChat } from "../../generation/run-chat.ts";
import { engineSettings } from "../../options/engine-settings.ts";
import { badRequest } from "../api-error.ts";
import { serverRun, servedModel } from "../chat-request.ts";
import type { ServerDeps } from "../deps.ts";
import type { ServedModel } from "../model-service.ts";
import { base64Images } from "../request-images.ts";
import { readJsonBody, validate } from "../validation.ts";
import { checkCapabilities } from "./capability-checks.ts";
import { ollamaContextErrors, timedLoad } from "./fit-context.ts";
import { formatConstraint } from "./format.ts";
import { metricsFields, type RequestTiming } from "./metrics.ts";
import { doesNotSupport, findModel, keepAliveOf, loadOrUnload } from "./model-request.ts";
import { nativeOptions } from "./options.ts";
import { nativeLogprobs, respondNative, type NativeShape, type ResponsePiece } from "./respond.ts";
import { generateSchema, type GenerateRequestBody } from "./schemas.ts";

/**
 * The prompt as the model sees it: the template around system + prompt (+ images; with the model's seed
 * messages unless the request carries an old context), or the raw text, after any old context. One that
 * is too long is cut (keeping num_keep tokens at its start) unless truncate is false.
 */
function promptSpec(model: ServedModel, body: GenerateRequestBody, images: Uint8Array[]): PromptSpec {
  const text = body.prompt ?? "";
  const overflow = body.truncate === false ? "refuse" : "cut";
  const prefix = body.context?.length ? { prefix: body.context } : {};
  if (body.raw) return { kind: "text", text, ...(images.length ? { media: { images } } : {}), overflow };
  const layers = body.context?.length ? { ...model.stored, messages: [] } : model.stored ?? {};
  return {
    kind: "conversation", messages: [{ role: "user", content: text, ...(images.length ? { images } : {}) }], layers, overflow, ...prefix,
    ...(body.system ? { system: body.system } : {}), ...(body.template ? { template: body.template } : {}), ...thinkSetting(body.think),
    ...(body.suffix ? { suffix: body.suffix } : {}),
  };
}

/**
 * How /api/generate shapes a piece of output: `response`, `thinking`, logprobs, and on the last object the
 * `context` that `exchange` gives for the whole answer (none in raw mode).
 */
export function generateShape(model: string, withLogprobs: boolean, timing: RequestTiming, exchange?: (content: string) => Promise<number[]>): NativeShape {
  const head = () => ({ model, created_at: new Date().toISOString() });
  const output = (piece: ResponsePiece) => ({
    response: piece.content, ...(piece.thinking ? { thinking: piece.thinking } : {}),
  });
  const logprobs = (piece: ResponsePiece) => (withLogprobs && piece.logprobs.length ? { logprobs: nativeLogprobs(piece.logprobs) } : {});
  return {
    chunk: (piece) => ({ ...head(), ...output(piece), done: false, ...logprobs(piece) }),
    async final(piece, finished) {
      const context = exchange ? await exchange(finished.content) : undefined;
      return {
        ...head(), ...output(piece), done: true, done_reason: finished.doneReason,
        ...(context ? { context } : {}), ...metricsFields(timing, finished.usage), ...logprobs(piece),
      };
    },
  };
}

/** The whole exchange as token ids, for a client to send back as `context`. */
function exchangeTokens(engine: EngineHandle, prompt: RenderedPrompt, content: string): Promise<number[]> {
  const text = withoutMediaMarkers(prompt.text, engine.info) + content;
  return engine.tokenize(text, { addSpecial: tokenizerAddsBos(text, engine.info.bosText) });
}

/** An /api/generate body as a chat spec, its images read already, its options from nativeOptions and the model's capabilities checked. */
export function ollamaGenerateSpec(model: ServedModel, body: GenerateRequestBody, images: Uint8Array[], options: OptionValues, capabilities: Capability[]): ChatSpec {
  const constraint = formatConstraint(body.format);
  return {
    prompt: promptSpec(model, body, images),
    output: { reasoning: !body.raw && capabilities.includes("thinking") && body.think !== false, ...(constraint ? { constraint } : {}) },
    options,
    limit: { overflow: "allow" },
    ...(body.logprobs === true ? { logprobs: body.top_logprobs ?? 0 } : {}),
  };
}

export function generate(deps: ServerDeps) {
  return async function generateHandler(c: Context) {
    const arrived = performance.now();
    const body = validate(generateSchema, await readJsonBody(c));
    if (body.raw && (body.template || body.system || body.context?.length)) throw badRequest("raw mode does not support template, system, or context");
    const name = body.model ?? "";
    const model = findModel(deps, name, "quoted");
    if (deps.models.embeds(model)) throw doesNotSupport(model, "generate");
    const keepAlive = keepAliveOf(deps, model, body.keep_alive);
    const options = nativeOptions(model, body);
    const images = base64Images(deps, model, body.images ?? [], () => doesNotSupport(model, "vision"));
    const capabilities = checkCapabilities(model, { suffix: Boolean(body.suffix), think: body.think });

    if (!body.prompt) {
      const doneReason = await loadOrUnload(deps, model, engineSettings(options).load, keepAlive);
      return c.json({ model: name, created_at: new Date().toISOString(), response: "", done: true, done_reason: doneReason });
    }
    let loaded = arrived;
    const spec = ollamaGenerateSpec(model, body, images, options, capabilities);
    const { engine, prompt, choices: [choice] } = await runChat(timedLoad(servedModel(deps, model, { keepAlive }), (at) => (loaded = at)), spec,
      serverRun(deps, model, c.req.raw.signal, arrived)).catch(ollamaContextErrors);
    const exchange = body.raw === true ? undefined : (content: string) => exchangeTokens(engine, prompt, content);
    return respondNative(c, choice!, generateShape(name, spec.logprobs !== undefined, { arrived, loaded }, exchange), body.stream !== false);
  };
}
