// POST /api/generate: a prompt (templated as one user turn, or raw) through the shared chat path,
// answered as Ollama's GenerateResponse chunks.
import type { Context } from "hono";
import { tokenizerAddsBos } from "../../chat/template.ts";
import type { ChatMessage } from "../../chat/types.ts";
import { startChat, type RenderedPrompt } from "../../generation/chat.ts";
import { constraintGrammar } from "../../chat/structured/constraint.ts";
import { formatConstraint } from "./format.ts";
import type { EngineHandle } from "../../generation/engine-handle.ts";
import { placeImages, withoutMediaMarkers } from "../../generation/prompt-images.ts";
import type { EngineImage } from "../../engine/types.ts";
import { base64Images } from "../request-images.ts";
import { badRequest } from "../api-error.ts";
import { tokenIdProblem } from "../../engine/token-ids.ts";
import type { ServerDeps } from "../deps.ts";
import { observeChoices } from "../observe.ts";
import { readJsonBody, validate } from "../validation.ts";
import { cutPromptTokens, PROMPT_TOO_LONG } from "./fit-context.ts";
import { metricsFields } from "./metrics.ts";
import { doesNotSupport, findModel, keepAliveOf, loadOrUnload } from "./model-request.ts";
import { generationLimits, loadOverrides, modelOptions, numKeep, samplerSettings } from "./options.ts";
import { renderModelPrompt, thinkSetting } from "../../generation/model-prompt.ts";
import { checkCapabilities, thinkingParser } from "./capability-checks.ts";
import type { ServedModel } from "../model-service.ts";
import { nativeLogprobs, respondNative, type NativeShape } from "./respond.ts";
import { generateSchema, type GenerateRequestBody } from "./schemas.ts";

/**
 * The prompt as the model sees it: the template around system + prompt (+ images; with the model's seed
 * messages unless the request carries an old context), or the raw text, after any old context.
 */
async function buildPrompt(engine: EngineHandle, model: ServedModel, body: GenerateRequestBody, images: Uint8Array[]): Promise<RenderedPrompt> {
  let text = body.prompt ?? "";
  let engineImages: EngineImage[] = [];
  const user: ChatMessage = { role: "user", content: text, ...(images.length ? { images } : {}) };
  if (!body.raw) {
    const source = body.context?.length ? { ...model.stored, messages: [] } : model.stored ?? {};
    const rendered = await renderModelPrompt(engine, source, {
      messages: [user], ...(body.system ? { system: body.system } : {}), ...(body.template ? { template: body.template } : {}), ...thinkSetting(body.think),
      ...(body.suffix ? { suffix: body.suffix } : {}),
    });
    if (!body.context?.length) return rendered;
    text = rendered.text;
    engineImages = rendered.images ?? [];
  } else if (images.length) {
    const placed = await placeImages([user], engine.info);
    text = placed.messages[0]!.content ?? "";
    engineImages = placed.images;
  }
  if (body.context?.length) {
    const problem = tokenIdProblem(body.context, engine.info.vocabularySize, "context");
    if (problem) throw badRequest(problem, "context");
    text = (await engine.detokenize(body.context)) + text;
  }
  const tokens = await engine.tokenize(withoutMediaMarkers(text, engine.info), { addSpecial: tokenizerAddsBos(text, engine.info.bosText) });
  return { text, tokens, ...(engineImages.length ? { images: engineImages } : {}) };
}

function generateShape(model: string, prompt: RenderedPrompt, engine: EngineHandle, raw: boolean, withLogprobs: boolean, timing: { arrived: number; loaded: number }): NativeShape {
  const head = () => ({ model, created_at: new Date().toISOString() });
  const output = (piece: Parameters<NativeShape["chunk"]>[0]) => ({
    response: piece.content, ...(piece.thinking ? { thinking: piece.thinking } : {}),
  });
  const logprobs = (piece: Parameters<NativeShape["chunk"]>[0]) => (withLogprobs && piece.logprobs.length ? { logprobs: nativeLogprobs(piece.logprobs) } : {});
  return {
    chunk: (piece) => ({ ...head(), ...output(piece), done: false, ...logprobs(piece) }),
    async final(piece, finished) {
      // The whole exchange as token ids, for a client to send back as `context` (not in raw mode).
      const text = withoutMediaMarkers(prompt.text, engine.info) + finished.content;
      const context = raw ? undefined : await engine.tokenize(text, { addSpecial: tokenizerAddsBos(text, engine.info.bosText) });
      return {
        ...head(), ...output(piece), done: true, done_reason: finished.doneReason,
        ...(context ? { context } : {}), ...metricsFields(timing, finished.usage), ...logprobs(piece),
      };
    },
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
    const options = modelOptions(model, body.options);
    const overrides = loadOverrides(options);
    const images = base64Images(deps, model, body.images ?? [], () => doesNotSupport(model, "vision"));
    const capabilities = checkCapabilities(model, { suffix: Boolean(body.suffix), think: body.think });

    if (!body.prompt) {
      const doneReason = await loadOrUnload(deps, model, overrides, keepAlive);
      return c.json({ model: name, created_at: new Date().toISOString(), response: "", done: true, done_reason: doneReason });
    }
    const engine = await deps.models.engine(model, overrides, keepAlive);
    const loaded = performance.now();
    let prompt = await buildPrompt(engine, model, body, images);
    const contextLength = engine.info.contextPerSequence;
    // A prompt with images is not cut (an image cannot be cut); the engine refuses one that does not fit.
    if (prompt.tokens.length >= contextLength && !prompt.images) {
      if (body.truncate === false) throw badRequest(PROMPT_TOO_LONG);
      prompt = { ...prompt, tokens: cutPromptTokens(prompt.tokens, contextLength, numKeep(options)) };
    }
    const withLogprobs = body.logprobs === true;
    const constraint = formatConstraint(body.format);
    const sampling = samplerSettings(options);
    if (constraint) sampling.grammar = constraintGrammar(constraint);
    const [choice] = await startChat(engine, prompt, {
      sampling, ...generationLimits(options), ...(withLogprobs ? { logprobs: body.top_logprobs ?? 0 } : {}),
    }, { signal: c.req.raw.signal, onDone: observeChoices(deps, model.id, arrived), ...(body.raw ? {} : thinkingParser(capabilities, body.think, prompt.text)) });
    return respondNative(c, choice!, generateShape(name, prompt, engine, body.raw === true, withLogprobs, { arrived, loaded }), body.stream !== false);
  };
}
