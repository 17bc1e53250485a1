// The `predict` channel's translation, with no engine or socket: a prediction config and chat history
// become the chat spec (the client's raw prompt template, the model's parameters under the config's), and
// a reply's chat events become the channel's packets (fragments, tool-call generation) and the stats and
// effective config that `success` carries.
import type { ChatMessage } from "../../../chat/types.ts";
import { EngineError } from "../../../engine/types.ts";
import type { ChatOutputRequest } from "../../../generation/chat-output.ts";
import { processedFraction, type ChatEvent, type PromptProgress } from "../../../generation/chat-events.ts";
import type { ChatSpec, PromptSpec } from "../../../generation/chat-spec.ts";
import { toLmStudioFields } from "../../../options/lmstudio-names.ts";
import { mergeOptionValues, type OptionValues } from "../../../options/values.ts";
import { badRequest } from "../../api-error.ts";
import { modelOptions } from "../../chat-request.ts";
import type { ServedModel } from "../../model-service.ts";
import type { Profile } from "../../profiles/profile.ts";
import { lmStudioStopReason } from "../v0-stats.ts";
import type { PredictionConfig, PromptTemplate } from "./config-stack.ts";

/** The template `model.complete()` sends: the messages' text, nothing around it. */
const JOIN_TEMPLATE = "{% for message in messages %}{{ message['content'] }}{% endfor %}";
const squeeze = (text: string) => text.replace(/\s+/g, "");

/**
 * The prompt text a client's own prompt template makes, or undefined to use the model's template.
 * Only the join template and manual (before/after) templates are taken: a client's Jinja code is not run.
 */
function clientTemplatePrompt(template: PromptTemplate | undefined, messages: ChatMessage[]): string | undefined {
  if (!template) return undefined;
  if (template.type === "jinja") {
    if (squeeze(template.jinjaPromptTemplate?.template ?? "") === squeeze(JOIN_TEMPLATE)) return messages.map((m) => m.content ?? "").join("");
    throw badRequest("Custom Jinja prompt templates are not supported: llamux renders the model's own chat template", "llm.prediction.promptTemplate");
  }
  const manual = template.manualPromptTemplate;
  if (!manual) throw badRequest('A "manual" prompt template needs manualPromptTemplate', "llm.prediction.promptTemplate");
  const wrap = (m: ChatMessage) => m.role === "system" ? manual.beforeSystem + (m.content ?? "") + manual.afterSystem
    : m.role === "assistant" ? manual.beforeAssistant + (m.content ?? "") + manual.afterAssistant
    : manual.beforeUser + (m.content ?? "") + manual.afterUser;
  return messages.map(wrap).join("") + manual.beforeAssistant;
}

/** The config's system prompt first, unless the history has its own. */
export function withSystemPrompt(messages: ChatMessage[], config: PredictionConfig): ChatMessage[] {
  if (!config.systemPrompt || messages.some((m) => m.role === "system")) return messages;
  return [{ role: "system", content: config.systemPrompt }, ...messages];
}

/** Tools, tool choice, structured output and reasoning as the config sets them. */
export function predictionOutput(config: PredictionConfig): ChatOutputRequest {
  return {
    tools: config.tools,
    reasoning: config.reasoning,
    ...(config.toolChoice !== undefined ? { toolChoice: config.toolChoice } : {}),
    ...(config.constraint ? { constraint: config.constraint } : {}),
  };
}

/** The effective prediction settings, as the KV config `success` carries. */
export function effectiveConfig(options: OptionValues, maxTokens: number | undefined) {
  const fields = toLmStudioFields({ ...options, stop: options.stop ?? [] }).filter((field) => field.key !== "llm.prediction.maxPredictedTokens");
  fields.push({ key: "llm.prediction.maxPredictedTokens", value: maxTokens !== undefined ? { checked: true, value: maxTokens } : { checked: false, value: 1 } });
  return { fields };
}

const fragment = (content: string, reasoningType: "none" | "reasoning") =>
  ({ type: "fragment", fragment: { content, tokensCount: 1, containsDrafted: false, reasoningType, isStructural: false } });

/**
 * The prompt of a predict call: the text a client's raw prompt template makes (`.complete()`), else the
 * conversation for the model's template. Tools with a raw prompt, or a client's Jinja code, are refused.
 */
export function predictPrompt(config: PredictionConfig, messages: ChatMessage[]): PromptSpec {
  const rawText = clientTemplatePrompt(config.promptTemplate, messages);
  if (rawText !== undefined && config.tools.length) throw badRequest("Tools cannot be used with a raw completion prompt template", "llm.prediction.tools");
  return rawText !== undefined ? { kind: "text", text: rawText } : { kind: "conversation", messages };
}

/** The profile's defaults < the model's own parameters (its Modelfile's) < the config's. */
export function predictOptions(profile: Profile, model: ServedModel, config: PredictionConfig): OptionValues {
  return mergeOptionValues(profile.openAiDefaults, modelOptions(model), config.options);
}

/** A predict call as a chat spec for the model that answers it. */
export function predictSpec(profile: Profile, model: ServedModel, config: PredictionConfig, prompt: PromptSpec): ChatSpec {
  return {
    prompt, output: predictionOutput(config), options: predictOptions(profile, model, config), limit: { overflow: profile.replyOverflow },
    // the SDK shows promptProcessingProgress for every prediction
    promptProgress: true,
  };
}

/**
 * The chat events without the prompt's progress reports, which go out as promptProcessingProgress
 * packets instead: real fractions of the tokens to process (a cached prefix is not processed), rising,
 * and 1 before the first fragment.
 */
export async function* reportingPromptProgress(
  events: AsyncIterable<ChatEvent | PromptProgress>, send: (packet: Record<string, unknown>) => void,
): AsyncGenerator<ChatEvent> {
  let reported = 0;
  const report = (fraction: number) => {
    if (fraction <= reported) return;
    reported = fraction;
    send({ type: "promptProcessingProgress", progress: fraction });
  };
  for await (const event of events) {
    if (event.type === "prompt_progress") {
      report(processedFraction(event));
      continue;
    }
    report(1);
    yield event;
  }
}

type DoneEvent = Extract<ChatEvent, { type: "done" }>;

/**
 * Sends a reply's events as the channel's packets: text and reasoning fragments, and each tool call's
 * start, name, argument fragments and end. Resolves with the reply's `done`; an engine error is thrown.
 */
export async function sendFragments(events: AsyncIterable<ChatEvent>, send: (packet: Record<string, unknown>) => void): Promise<DoneEvent | undefined> {
  const started = new Set<number>();
  const startCall = (index: number, id: string | undefined) => {
    if (started.has(index)) return;
    started.add(index);
    send({ type: "toolCallGenerationStart", ...(id ? { toolCallId: id } : {}) });
  };
  for await (const event of events) {
    switch (event.type) {
      case "content":
        if (event.text) send(fragment(event.text, "none"));
        break;
      case "reasoning":
        if (event.text) send(fragment(event.text, "reasoning"));
        break;
      case "tool_call_delta":
        startCall(event.index, event.id);
        if (event.name) send({ type: "toolCallGenerationNameReceived", name: event.name });
        if (event.arguments) send({ type: "toolCallGenerationArgumentFragmentGenerated", content: event.arguments });
        break;
      case "tool_call":
        startCall(event.index, event.call.id);
        send({
          type: "toolCallGenerationEnd",
          toolCallRequest: { id: event.call.id, type: "function", name: event.call.name, arguments: event.call.arguments },
        });
        break;
      case "error":
        throw new EngineError(event.code, event.message);
      case "done":
        return event;
    }
  }
  return undefined;
}

/** The `success` packet's stats of a finished reply. */
export function predictionStats(done: DoneEvent, maxTokens: number | undefined, gpuLayers: number, totalSeconds: number) {
  const { usage } = done;
  const decodeSeconds = usage.decodeMs / 1000;
  return {
    stopReason: lmStudioStopReason(done, maxTokens),
    tokensPerSecond: decodeSeconds > 0 ? usage.completionTokens / decodeSeconds : 0,
    numGpuLayers: gpuLayers,
    timeToFirstTokenSec: usage.timeToFirstTokenMs / 1000,
    totalTimeSec: totalSeconds,
    promptTokensCount: usage.promptTokens,
    predictedTokensCount: usage.completionTokens,
    totalTokensCount: usage.promptTokens + usage.completionTokens,
  };
}
