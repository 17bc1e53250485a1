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
import type { ModelHandle } from "../../../generation/chat-spec.ts";
import type { EngineHandle } from "../../../engine/engine-handle.ts";
import { renderChat, runChat } from "../../../generation/run-chat.ts";
import { engineSettings } from "../../../options/engine-settings.ts";
import { modelOptions, serverRun } from "../../chat-request.ts";
import type { ServerDeps } from "../../deps.ts";
import { collapse, kvConfigStackSchema, predictionConfig } from "./config-stack.ts";
import { chatHistorySchema, toChatMessages } from "./history.ts";
import { Instances, parameter, specifierSchema } from "./instances.ts";
import { instanceInfo, loadConfigOf } from "./model-info.ts";
import { effectiveConfig, predictionOutput, predictionStats, predictOptions, predictPrompt, predictSpec, reportingPromptProgress, sendFragments, withSystemPrompt } from "./prediction.ts";
import type { ChannelContext, ChannelEndpoint, RpcEndpoint } from "./socket-session.ts";

const predictSchema = z.object({
  modelSpecifier: specifierSchema,
  history: chatHistorySchema,
  predictionConfigStack: kvConfigStackSchema,
  fuzzyPresetIdentifier: z.string().optional(),
  ignoreServerSessionConfig: z.boolean().optional(),
});

/** An engine the call has already picked (an instance, or a model loaded just in time for it). */
function loadedEngine(engine: EngineHandle): ModelHandle {
  return { engine: async () => engine };
}

/** A cancel packet, the channel's end or the socket's end stops the sequence. */
function cancellation(channel: ChannelContext): AbortSignal {
  const cancel = new AbortController();
  channel.onPacket((packet) => {
    if ((packet as { type?: unknown } | null)?.type === "cancel") cancel.abort();
  });
  return AbortSignal.any([cancel.signal, channel.signal]);
}

export function predictEndpoint(deps: ServerDeps, instances: Instances): ChannelEndpoint {
  const { models } = instances;
  return async function predict(value, channel) {
    const arrived = performance.now();
    const request = parameter(predictSchema, value, "predict");
    const config = predictionConfig(collapse(request.predictionConfigStack));
    const messages = withSystemPrompt(toChatMessages(request.history), config);
    const cancel = cancellation(channel);
    const prompt = predictPrompt(config, messages);
    // The model's own parameters go under the config's; which model that is, the specifier says.
    const { engine, loaded } = await instances.engine(request.modelSpecifier, (model) => engineSettings(predictOptions(deps.profile, model, config)).load);
    const spec = predictSpec(deps.profile, loaded.model, config, prompt);

    channel.send({ type: "promptProcessingProgress", progress: 0 });
    const { maxTokens, settings, choices: [choice] } = await runChat(loadedEngine(engine), spec, serverRun(deps, loaded.model, cancel, arrived));
    const send = (packet: Record<string, unknown>) => channel.send(packet);
    const done = await sendFragments(reportingPromptProgress(choice!.eventsWithProgress(), send), send);
    if (!done) return;
    const instance = models.loaded().find((l) => l.engine === engine) ?? loaded;
    channel.send({
      type: "success",
      stats: predictionStats(done, maxTokens, engine.options.gpuLayers ?? 0, (performance.now() - arrived) / 1000),
      modelInfo: instanceInfo(models, instance),
      loadModelConfig: loadConfigOf(instance),
      predictionConfig: effectiveConfig({ ...spec.options, temperature: settings.sampling.temperature, seed: settings.sampling.seed }, maxTokens),
    });
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
      output: predictionOutput({ ...config, tools }), options: modelOptions(loaded.model), limit: { overflow: "allow" },
    }, deps.toolCallParser ? { toolCallParser: deps.toolCallParser } : {});
    let formatted = prompt.text;
    if (request.opts.omitBosToken && engine.info.bosText && formatted.startsWith(engine.info.bosText)) formatted = formatted.slice(engine.info.bosText.length);
    if (request.opts.omitEosToken && engine.info.eosText && formatted.endsWith(engine.info.eosText)) formatted = formatted.slice(0, -engine.info.eosText.length);
    return { formatted };
  };
}
