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
import type { ChatMessage } from "../../../chat/types.ts";
import { EngineError } from "../../../engine/types.ts";
import type { ChatOutputRequest } from "../../../generation/chat-output.ts";
import type { ChatSpec, ModelHandle, PromptSpec } from "../../../generation/chat-spec.ts";
import type { EngineHandle } from "../../../engine/engine-handle.ts";
import { renderChat, runChat } from "../../../generation/run-chat.ts";
import { engineSettings } from "../../../options/engine-settings.ts";
import { toLmStudioFields } from "../../../options/lmstudio-names.ts";
import { mergeOptionValues, type OptionValues } from "../../../options/values.ts";
import { badRequest } from "../../api-error.ts";
import { modelOptions, serverRun } from "../../chat-request.ts";
import type { ServerDeps } from "../../deps.ts";
import type { LoadedModel } from "../../model-service.ts";
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

function withSystemPrompt(messages: ChatMessage[], config: PredictionConfig): ChatMessage[] {
  if (!config.systemPrompt || messages.some((m) => m.role === "system")) return messages;
  return [{ role: "system", content: config.systemPrompt }, ...messages];
}

function outputOf(config: PredictionConfig): ChatOutputRequest {
  return {
    tools: config.tools,
    reasoning: config.reasoning,
    ...(config.toolChoice !== undefined ? { toolChoice: config.toolChoice } : {}),
    ...(config.constraint ? { constraint: config.constraint } : {}),
  };
}

/** An engine the call has already picked (an instance, or a model loaded just in time for it). */
function loadedEngine(engine: EngineHandle): ModelHandle {
  return { engine: async () => engine };
}

/** The effective prediction settings, as the KV config `success` carries. */
function effectiveConfig(options: OptionValues, maxTokens: number | undefined) {
  const fields = toLmStudioFields({ ...options, stop: options.stop ?? [] }).filter((field) => field.key !== "llm.prediction.maxPredictedTokens");
  fields.push({ key: "llm.prediction.maxPredictedTokens", value: maxTokens !== undefined ? { checked: true, value: maxTokens } : { checked: false, value: 1 } });
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
    const rawText = clientTemplatePrompt(config.promptTemplate, messages);
    if (rawText !== undefined && config.tools.length) throw badRequest("Tools cannot be used with a raw completion prompt template", "llm.prediction.tools");
    // The model's own parameters (its Modelfile's) go under the config's; which model that is, the specifier says.
    const optionsFor = (model: LoadedModel["model"]): OptionValues => mergeOptionValues(deps.profile.openAiDefaults, modelOptions(model), config.options);
    const { engine, loaded } = await instances.engine(request.modelSpecifier, (model) => engineSettings(optionsFor(model)).load);
    const prompt: PromptSpec = rawText !== undefined ? { kind: "text", text: rawText } : { kind: "conversation", messages };
    const spec: ChatSpec = {
      prompt, output: outputOf(config), options: optionsFor(loaded.model), limit: { overflow: deps.profile.replyOverflow }, promptProgress: true,
    };

    channel.send({ type: "promptProcessingProgress", progress: 0 });
    const { maxTokens, settings, choices: [choice] } = await runChat(loadedEngine(engine), spec, serverRun(deps, loaded.model, cancel.signal, arrived));
    // Real fractions of the tokens to process (a cached prefix is not processed), ending at 1 before the first fragment.
    let reported = 0;
    const reportProgress = (fraction: number) => {
      if (fraction <= reported) return;
      reported = fraction;
      channel.send({ type: "promptProcessingProgress", progress: fraction });
    };

    const started = new Set<number>();
    const startCall = (index: number, id: string | undefined) => {
      if (started.has(index)) return;
      started.add(index);
      channel.send({ type: "toolCallGenerationStart", ...(id ? { toolCallId: id } : {}) });
    };
    for await (const event of choice!.eventsWithProgress()) {
      if (event.type === "prompt_progress") {
        const toProcess = event.total - event.cached;
        reportProgress(toProcess > 0 ? (event.processed - event.cached) / toProcess : 1);
        continue;
      }
      reportProgress(1);
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
          const instance = models.loaded().find((l) => l.engine === engine) ?? loaded;
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
            modelInfo: instanceInfo(models, instance),
            loadModelConfig: loadConfigOf(instance),
            predictionConfig: effectiveConfig({ ...spec.options, temperature: settings.sampling.temperature, seed: settings.sampling.seed }, maxTokens),
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
    const { engine, loaded } = await instances.engine(request.specifier);
    const { prompt } = await renderChat(loadedEngine(engine), {
      prompt: { kind: "conversation", messages: withSystemPrompt(toChatMessages(request.history), config) },
      output: outputOf({ ...config, tools }), options: modelOptions(loaded.model), limit: { overflow: "allow" },
    }, deps.toolCallParser ? { toolCallParser: deps.toolCallParser } : {});
    let formatted = prompt.text;
    if (request.opts.omitBosToken && engine.info.bosText && formatted.startsWith(engine.info.bosText)) formatted = formatted.slice(engine.info.bosText.length);
    if (request.opts.omitEosToken && engine.info.eosText && formatted.endsWith(engine.info.eosText)) formatted = formatted.slice(0, -engine.info.eosText.length);
    return { formatted };
  };
}
