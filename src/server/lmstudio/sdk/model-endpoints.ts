// The endpoints /llm and /embedding share (lmstudio-js baseModelBackendInterface), plus tokenize and
// countTokens, which both namespaces have:
//   RPC listLoaded                -> [ModelInstanceInfo]
//   RPC getModelInfo {specifier, throwIfNotFound} -> ModelInstanceInfo | nothing
//   RPC getLoadConfig {specifier} -> KVConfig of the instance's load options
//   RPC unloadModel {identifier}  -> nothing (an instance id, or a model key: all its instances)
//   RPC tokenize {specifier, inputString} -> {tokens}; countTokens -> {tokenCount} (the text's own tokens, no BOS)
//   channel getOrLoad {identifier, loadTtlMs?, loadConfigStack}
//       -> alreadyLoaded {info} | startLoading {identifier, info}, unloadingOtherJITModel {info} (Auto-Evict),
//          loadProgress {progress}…, loadSuccess {info}
//   channel loadModel {modelKey, identifier?, ttlMs?, loadConfigStack}   (always a new instance, no TTL unless given)
//       -> resolved {info}, progress {progress}…, success {info}
// Loads report progress 0 when they start and 1 when the engine is ready.
import { z } from "zod";
import type { EngineOptions } from "../../../engine/types.ts";
import { notFound } from "../../api-error.ts";
import type { ChannelEndpoint, RpcEndpoint } from "./socket-session.ts";
import { collapse, kvConfigStackSchema, loadContextLength } from "./config-stack.ts";
import { Instances, parameter, specifierSchema } from "./instances.ts";
import { instanceInfo, loadConfigOf, modelInfo } from "./model-info.ts";

const textParameter = z.object({ specifier: specifierSchema, inputString: z.string() });
const ttlMs = z.number().int().min(1).optional();

function overridesOf(instances: Instances, stack: z.infer<typeof kvConfigStackSchema>): Partial<EngineOptions> {
  const contextLength = loadContextLength(collapse(stack), instances.domain);
  return contextLength !== undefined ? { contextPerSequence: contextLength } : {};
}

export function modelRpcEndpoints(instances: Instances): Record<string, RpcEndpoint> {
  const { models } = instances;
  const tokens = async (value: unknown, endpoint: string) => {
    const { specifier, inputString } = parameter(textParameter, value, endpoint);
    const { engine } = await instances.engine(specifier);
    return engine.tokenize(inputString, { addSpecial: false, parseSpecial: false });
  };
  return {
    listLoaded: async () => (await instances.list()).map((loaded) => instanceInfo(models, loaded)),
    getModelInfo: async (value) => {
      const { specifier, throwIfNotFound } = parameter(z.object({ specifier: specifierSchema, throwIfNotFound: z.boolean() }), value, "getModelInfo");
      const found = throwIfNotFound ? await instances.require(specifier) : await instances.find(specifier);
      return found ? instanceInfo(models, found) : undefined;
    },
    getLoadConfig: async (value) => {
      const { specifier } = parameter(z.object({ specifier: specifierSchema }), value, "getLoadConfig");
      return loadConfigOf(await instances.require(specifier));
    },
    unloadModel: async (value) => {
      const { identifier } = parameter(z.object({ identifier: z.string().min(1) }), value, "unloadModel");
      const loaded = await instances.list();
      const exact = loaded.filter((l) => models.instanceId(l) === identifier);
      const targets = exact.length ? exact : loaded.filter((l) => l.model.id === identifier);
      if (targets.length === 0) throw notFound(`No loaded model instance "${identifier}"`, "identifier");
      await Promise.all(targets.map((l) => models.unloadInstance(l.engine)));
      return undefined;
    },
    tokenize: async (value) => ({ tokens: await tokens(value, "tokenize") }),
    countTokens: async (value) => ({ tokenCount: (await tokens(value, "countTokens")).length }),
  };
}

export function modelChannelEndpoints(instances: Instances): Record<string, ChannelEndpoint> {
  const { models } = instances;
  const getOrLoadSchema = z.object({ identifier: z.string().min(1), loadTtlMs: ttlMs, loadConfigStack: kvConfigStackSchema });
  const loadModelSchema = z.object({ modelKey: z.string().min(1), identifier: z.string().min(1).max(256).optional(), ttlMs, loadConfigStack: kvConfigStackSchema });
  return {
    getOrLoad: async (value, channel) => {
      const request = parameter(getOrLoadSchema, value, "getOrLoad");
      const already = await instances.find({ type: "query", query: { identifier: request.identifier } });
      if (already) {
        await models.useInstance(already);
        return channel.send({ type: "alreadyLoaded", info: instanceInfo(models, already) });
      }
      const model = instances.model(request.identifier);
      channel.send({ type: "startLoading", identifier: model.id, info: modelInfo(model) });
      for (const evicted of models.evictedByJitLoad(model)) channel.send({ type: "unloadingOtherJITModel", info: instanceInfo(models, evicted) });
      channel.send({ type: "loadProgress", progress: 0 });
      // JIT loading as on the REST routes: Auto-Evict, and the TTL only when this call loads it.
      const keepAlive = request.loadTtlMs !== undefined ? { ms: request.loadTtlMs, policy: "on-load" as const } : undefined;
      const engine = await models.engine(model, overridesOf(instances, request.loadConfigStack), keepAlive);
      const loaded = models.loaded().find((l) => l.engine === engine);
      if (!loaded) throw notFound(`Model "${model.id}" was unloaded while it loaded`);
      channel.send({ type: "loadProgress", progress: 1 });
      channel.send({ type: "loadSuccess", info: instanceInfo(models, loaded) });
    },
    loadModel: async (value, channel) => {
      const request = parameter(loadModelSchema, value, "loadModel");
      const model = instances.model(request.modelKey);
      channel.send({ type: "resolved", info: modelInfo(model) });
      channel.send({ type: "progress", progress: 0 });
      // As `lms load`: loaded on purpose, kept until unloaded unless a TTL is given.
      const keepAlive = { ms: request.ttlMs ?? Infinity, policy: "replace" as const };
      const engine = await models.load(model, overridesOf(instances, request.loadConfigStack), keepAlive, request.identifier);
      const loaded = models.loaded().find((l) => l.engine === engine);
      if (!loaded) throw notFound(`Model "${model.id}" was unloaded while it loaded`);
      channel.send({ type: "progress", progress: 1 });
      channel.send({ type: "success", info: instanceInfo(models, loaded) });
    },
  };
}
