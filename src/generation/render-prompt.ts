// A request's prompt as the engine takes it: a conversation through the model's template (fitted to the
// context as the request asks), raw text with its media, or token ids as they are; any of them after the
// token ids of an earlier reply when the request carries them.
import { tokenizerAddsBos } from "../chat/template.ts";
import { checkTokenIds } from "../engine/token-ids.ts";
import { checkSchemaDepth, MAX_SCHEMA_DEPTH } from "../chat/structured/nesting.ts";
import type { RenderedPrompt } from "./chat.ts";
import type { ChatOutputPlan } from "./chat-output.ts";
import { ContextLimitError, type ConversationPrompt, type PromptSpec, type TextPrompt, type TokensPrompt } from "./chat-spec.ts";
import type { EngineHandle } from "../engine/engine-handle.ts";
import { renderModelPrompt } from "./model-prompt.ts";
import { placeImages, withoutMediaMarkers } from "./prompt-images.ts";
import { cutPromptTokens, fitMessages, promptFits } from "./prompt-fit.ts";
import { withoutAttributionLines } from "./attribution-line.ts";

export interface PromptFitting {
  contextLength: number;
  /** Tokens kept at the start of a cut text prompt. */
  numKeep: number;
}

function renderConversation(engine: EngineHandle, spec: ConversationPrompt, plan: ChatOutputPlan, fitting: PromptFitting): Promise<RenderedPrompt> {
  // Tool calls in the history are walked (special-text shield, the template) like tools: the same bound.
  spec.messages.forEach((message, index) => {
    if (message.tool_calls?.length) checkSchemaDepth(message.tool_calls, MAX_SCHEMA_DEPTH, `Cannot use messages[${index}].tool_calls: their arguments`);
  });
  const render = (messages: ConversationPrompt["messages"]) => renderModelPrompt(engine, spec.layers ?? {}, {
    messages,
    ...(plan.tools.length ? { tools: plan.tools } : {}),
    ...(plan.syntax ? { toolCallSyntax: plan.syntax } : {}),
    ...(spec.system ? { system: spec.system } : {}),
    ...(spec.template ? { template: spec.template } : {}),
    ...(spec.suffix ? { suffix: spec.suffix } : {}),
    ...(spec.think !== undefined ? { think: spec.think } : {}),
    ...(spec.templateVariables ? { templateVariables: spec.templateVariables } : {}),
    ...(spec.addGenerationPrompt !== undefined ? { addGenerationPrompt: spec.addGenerationPrompt } : {}),
    ...(spec.continueFinalMessage ? { continueFinalMessage: true } : {}),
    ...(spec.addSpecial !== undefined ? { addSpecial: spec.addSpecial } : {}),
  });
  // What never enters the prompt, whatever API brought the conversation.
  const messages = withoutAttributionLines(spec.messages);
  return spec.overflow === "drop-oldest" ? fitMessages(messages, render, fitting.contextLength) : render(messages);
}

/** Raw text, its media placed before it as in a user message. */
async function placeText(engine: EngineHandle, spec: TextPrompt): Promise<Omit<RenderedPrompt, "tokens">> {
  const media = spec.media ?? {};
  if (!media.images?.length && !media.audio?.length) return { text: spec.text };
  const placed = await placeImages([{ role: "user", content: spec.text, ...media }], engine.info);
  return { text: placed.messages[0]!.content ?? "", images: placed.images };
}

/** Token ids as they are, with their text (what the output parser and an echo read). */
async function placeTokens(engine: EngineHandle, spec: TokensPrompt, prefix: number[]): Promise<RenderedPrompt> {
  checkTokenIds(spec.tokens, engine.info.vocabularySize, "prompt");
  const tokens = prefix.length ? [...prefix, ...spec.tokens] : spec.tokens;
  return { text: await engine.detokenize(tokens), tokens };
}

async function tokenized(engine: EngineHandle, prompt: Omit<RenderedPrompt, "tokens">, addSpecial?: boolean): Promise<RenderedPrompt> {
  const tokens = await engine.tokenize(withoutMediaMarkers(prompt.text, engine.info), {
    addSpecial: addSpecial ?? tokenizerAddsBos(prompt.text, engine.info.bosText), parseSpecial: true,
  });
  return { ...prompt, tokens, ...(prompt.images?.length ? { images: prompt.images } : {}) };
}

export async function renderPrompt(engine: EngineHandle, spec: PromptSpec, plan: ChatOutputPlan, fitting: PromptFitting): Promise<RenderedPrompt> {
  if (spec.prefix?.length) checkTokenIds(spec.prefix, engine.info.vocabularySize, "context");
  if (spec.kind === "tokens") return placeTokens(engine, spec, spec.prefix ?? []);
  const placed = spec.kind === "conversation" ? await renderConversation(engine, spec, plan, fitting) : await placeText(engine, spec);
  const addSpecial = spec.kind === "text" ? spec.addSpecial : undefined;
  const prompt = spec.prefix?.length ? await tokenized(engine, { ...placed, text: (await engine.detokenize(spec.prefix)) + placed.text }, addSpecial)
    : "tokens" in placed ? placed as RenderedPrompt : await tokenized(engine, placed, addSpecial);
  // A prompt with media is not cut (an image cannot be cut).
  if (spec.overflow === "cut" && !promptFits(prompt.tokens.length, fitting.contextLength) && !prompt.images?.length) {
    return { ...prompt, tokens: cutPromptTokens(prompt.tokens, fitting.contextLength, fitting.numKeep) };
  }
  return prompt;
}

/** The prompt's own tokens must leave room for one generated token. */
export function checkPromptFits(prompt: RenderedPrompt, contextLength: number): void {
  if (!promptFits(prompt.tokens.length, contextLength)) throw new ContextLimitError("prompt", prompt.tokens.length, contextLength);
}
