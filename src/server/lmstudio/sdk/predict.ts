// The /llm `predict` channel (what `model.respond()`, `.act()` and `.complete()` open) and the
// `applyPromptTemplate` RPC, over the shared chat path: the model's template, the same tool-call
// parsers and grammars as every route, the same sampling translation as /api/v1/chat.
//   creation {modelSpecifier, history, predictionConfigStack, fuzzyPresetIdentifier?, ignoreServerSessionConfig?}
//   -> promptProcessingProgress {progress: 0}, then {progress: 1} once the prompt is processed
//   -> fragment {fragment: {content, tokensCount, containsDrafted, reasoningType: "none"|"reasoning", isStructural}}
//   -> toolCallGenerationStart {toolCallId?}, toolCallGenerationNameReceived {name},
//      toolCallGenerationArgumentFragmentGenerated {content}, toolCallGenerationEnd {toolCallRequest}
//   -> success {stats, modelInfo, loadModelConfig, predictionConfig}
//   <- cancel: the sequence stops at the next decode step and `success` says stopReason "userStopped"
// `.complete()` sends a prompt template that joins the messages' text: the prompt is then that text, raw.
import { z } from "zod";
import type { SamplerSettings } from "../../../engine/types.ts";
import type { ChatMessage } from "../../../chat/types.ts";
import { tokenizerAddsBos } from "../../../chat/template.ts";
import { EngineError } from "../../../engine/types.ts";
import { renderChatPrompt, startChat, type RenderedPrompt } from "../../../generation/chat.ts";
import { planChatOutput, type ChatOutputPlan } from "../../../generation/chat-output.ts";
import type { EngineHandle } from "../../../generation/engine-handle.ts";
import { badRequest } from "../../api-error.ts";
import type { ServerDeps } from "../../deps.ts";
import { observeChoices } from "../../observe.ts";
import { checkContextLength } from "../../openai/context-check.ts";
import { predictionLoadOverrides, predictionRequest } from "../prediction-settings.ts";
import { lmStudioStopReason } from "../v0-stats.ts";
import { collapse, kvConfigStackSchema, predictionConfig, type PredictionConfig, type PromptTemplate } from "./config-stack.ts";
import { chatHistorySchema, toChatMessages } from "./history.ts";
import { Instances, parameter, specifierSchema } from "./instances.ts";
import { instanceInfo, loadConfigOf } from "./model-info.ts";
import type { ChannelContext, ChannelEndpoint, RpcEndpoint } from "./socket-session.ts";

const predictSchema = z.object({
  modelSpecifier: specifierSchema,
  history: chatHistorySchema,
  predictionConfigStack: kvConfigStackSchema,
  fuzzyPresetIdentifier: z.string().optional(),
  ignoreServerSessionConfig: z.boolean().optional(),
});

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

async function rawPrompt(engine: EngineHandle, text: string): Promise<RenderedPrompt> {
  return { text, tokens: await engine.tokenize(text, { addSpecial: tokenizerAddsBos(text, engine.info.bosText), parseSpecial: true }) };
}

function withSystemPrompt(messages: ChatMessage[], config: PredictionConfig): ChatMessage[] {
  if (!config.systemPrompt || messages.some((m) => m.role === "system")) return messages;
  return [{ role: "system", content: config.systemPrompt }, ...messages];
}

function planOf(deps: ServerDeps, engine: EngineHandle, config: PredictionConfig): ChatOutputPlan {
  return planChatOutput({
    tools: config.tools,
    reasoning: config.reasoning,
    ...(config.toolChoice !== undefined ? { toolChoice: config.toolChoice } : {}),
    ...(config.settings.constraint ? { constraint: config.settings.constraint } : {}),
  }, engine.info.chatTemplate, deps.toolCallParser);
}

/** The effective prediction settings, as the KV config `success` carries. */
function effectiveConfig(sampling: Partial<SamplerSettings>, maxTokens: number | undefined, stop: string[] | undefined) {
  const fields: Array<{ key: string; value: unknown }> = [];
  const add = (key: string, value: unknown) => value !== undefined && fields.push({ key: `llm.prediction.${key}`, value });
  add("temperature", sampling.temperature);
  add("topKSampling", sampling.topK);
  add("topPSampling", sampling.topP !== undefined ? { checked: true, value: sampling.topP } : undefined);
  add("minPSampling", sampling.minP !== undefined ? { checked: true, value: sampling.minP } : undefined);
  add("repeatPenalty", sampling.repeatPenalty !== undefined ? { checked: true, value: sampling.repeatPenalty } : undefined);
  add("maxPredictedTokens", maxTokens !== undefined ? { checked: true, value: maxTokens } : { checked: false, value: 1 });
  add("stopStrings", stop ?? []);
  add("seed", sampling.seed !== undefined ? { checked: true, value: sampling.seed } : undefined);
  return { fields };
}

const fragment = (content: string, reasoningType: "none" | "reasoning") =>
  ({ type: "fragment", fragment: { content, tokensCount: 1, containsDrafted: false, reasoningType, isStructural: false } });

/** A cancel packet, the channel's end or the socket's end stops the sequence. */
function cancellation(channel: ChannelContext): AbortController {
  const cancel = new AbortController();
  channel.onPacket((packet) => {
    if ((packet as { type?: unknown } | null)?.type === "cancel") cancel.abort();
  });
  if (channel.signal.aborted) cancel.abort();
  else channel.signal.addEventListener("abort", () => cancel.abort(), { once: true });
  return cancel;
}

export function predictEndpoint(deps: ServerDeps, instances: Instances): ChannelEndpoint {
  const { models } = instances;
  return async function predict(value, channel) {
    const arrived = performance.now();
    const request = parameter(predictSchema, value, "predict");
    const config = predictionConfig(collapse(request.predictionConfigStack));
    const messages = withSystemPrompt(toChatMessages(request.history), config);
    const cancel = cancellation(channel);
    const { engine, loaded } = await instances.engine(request.modelSpecifier, (model) => predictionLoadOverrides(model, config.settings));
    const rawText = clientTemplatePrompt(config.promptTemplate, messages);
    if (rawText !== undefined && config.tools.length) throw badRequest("Tools cannot be used with a raw completion prompt template", "llm.prediction.tools");
    const plan = planOf(deps, engine, config);
    const prompt = rawText !== undefined
      ? await rawPrompt(engine, rawText)
      : await renderChatPrompt(engine, { messages, tools: plan.tools, ...(plan.syntax ? { toolCallSyntax: plan.syntax } : {}) });
    const { sampling, fields, maxTokens } = predictionRequest(deps.profile, loaded.model, config.settings);
    checkContextLength(deps.profile, prompt.tokens.length, maxTokens, engine.info.contextPerSequence);
    // Call markers are special tokens: keep them in the text the parser reads.
    if (plan.readsToolCalls) fields.renderSpecialTokens = true;

    channel.send({ type: "promptProcessingProgress", progress: 0 });
    const [choice] = await startChat(engine, prompt, { sampling: { ...sampling, ...(plan.grammar !== undefined ? { grammar: plan.grammar } : {}) }, ...fields }, {
      signal: cancel.signal, onDone: observeChoices(deps, loaded.model.id, arrived), parser: () => plan.parser(prompt.text),
    });
    channel.send({ type: "promptProcessingProgress", progress: 1 });

    const started = new Set<number>();
    const startCall = (index: number, id: string | undefined) => {
      if (started.has(index)) return;
      started.add(index);
      channel.send({ type: "toolCallGenerationStart", ...(id ? { toolCallId: id } : {}) });
    };
    for await (const event of choice!.events()) {
      switch (event.type) {
        case "content":
          if (event.text) channel.send(fragment(event.text, "none"));
          break;
        case "reasoning":
          if (event.text) channel.send(fragment(event.text, "reasoning"));
          break;
        case "tool_call_delta":
          startCall(event.index, event.id);
          if (event.name) channel.send({ type: "toolCallGenerationNameReceived", name: event.name });
          if (event.arguments) channel.send({ type: "toolCallGenerationArgumentFragmentGenerated", content: event.arguments });
          break;
        case "tool_call":
          startCall(event.index, event.call.id);
          channel.send({
            type: "toolCallGenerationEnd",
            toolCallRequest: { id: event.call.id, type: "function", name: event.call.name, arguments: event.call.arguments },
          });
          break;
        case "error":
          throw new EngineError(event.code, event.message);
        case "done": {
          const { usage } = event;
          const decodeSeconds = usage.decodeMs / 1000;
          const current = models.loaded().find((l) => l.engine === engine) ?? loaded;
          channel.send({
            type: "success",
            stats: {
              stopReason: lmStudioStopReason(event, maxTokens),
              tokensPerSecond: decodeSeconds > 0 ? usage.completionTokens / decodeSeconds : 0,
              numGpuLayers: engine.options.gpuLayers ?? 0,
              timeToFirstTokenSec: usage.timeToFirstTokenMs / 1000,
              totalTimeSec: (performance.now() - arrived) / 1000,
              promptTokensCount: usage.promptTokens,
              predictedTokensCount: usage.completionTokens,
              totalTokensCount: usage.promptTokens + usage.completionTokens,
            },
            modelInfo: instanceInfo(models, current),
            loadModelConfig: loadConfigOf(current),
            predictionConfig: effectiveConfig(sampling, maxTokens, fields.stop),
          });
          return;
        }
      }
    }
  };
}

const applyTemplateSchema = z.object({
  specifier: specifierSchema,
  history: chatHistorySchema,
  predictionConfigStack: kvConfigStackSchema,
  opts: z.object({ omitBosToken: z.boolean().optional(), omitEosToken: z.boolean().optional(), toolDefinitions: z.array(z.unknown()).optional() }),
});

/** applyPromptTemplate -> {formatted}: the prompt the model's template makes of the history. */
export function applyPromptTemplateEndpoint(deps: ServerDeps, instances: Instances): RpcEndpoint {
  return async (value) => {
    const request = parameter(applyTemplateSchema, value, "applyPromptTemplate");
    const config = predictionConfig(collapse(request.predictionConfigStack));
    const tools = request.opts.toolDefinitions !== undefined
      ? predictionConfig(new Map([["llm.prediction.tools", { type: "toolArray", tools: request.opts.toolDefinitions }]])).tools
      : config.tools;
    const { engine } = await instances.engine(request.specifier);
    const plan = planOf(deps, engine, { ...config, tools });
    const prompt = await renderChatPrompt(engine, {
      messages: withSystemPrompt(toChatMessages(request.history), config), tools: plan.tools, ...(plan.syntax ? { toolCallSyntax: plan.syntax } : {}),
    });
    let formatted = prompt.text;
    if (request.opts.omitBosToken && engine.info.bosText && formatted.startsWith(engine.info.bosText)) formatted = formatted.slice(engine.info.bosText.length);
    if (request.opts.omitEosToken && engine.info.eosText && formatted.endsWith(engine.info.eosText)) formatted = formatted.slice(0, -engine.info.eosText.length);
    return { formatted };
  };
}
