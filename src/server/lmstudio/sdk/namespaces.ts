// Every endpoint of LM Studio's SDK protocol that llamux serves, by namespace (one WebSocket path each).
// Endpoints not listed answer with rpcError/channelError naming what is not served; the namespaces
// llamux does not serve at all (diagnostics, files, repository, plugins, runtime) authenticate and then
// refuse each call the same way.
//
// /llm        RPC   listLoaded getModelInfo getLoadConfig unloadModel tokenize countTokens applyPromptTemplate
//             chan  getOrLoad loadModel predict                  (model-endpoints.ts, predict.ts)
// /embedding  RPC   listLoaded getModelInfo getLoadConfig unloadModel tokenize countTokens
//                   embedString {modelSpecifier, inputString} -> {embedding}
//             chan  getOrLoad loadModel
// /system     RPC   listDownloadedModels -> [ModelInfo] (served and stored models)
//                   version -> {version, build}; info -> {server: "llamux", version, llamaCpp, platform, arch}
//                   notify -> nothing (logged)
//             chan  alive (open until the socket closes)
// What each endpoint needs of the socket's key is in each namespace's `needs`, as a route table says it:
// reading needs any key, using a model chat (or embeddings), loading and unloading on purpose admin.
import { z } from "zod";
import { llamaCppRelease, llamuxVersion } from "../../../version.ts";
import { logger } from "../../../log.ts";
import type { ServerDeps } from "../../deps.ts";
import type { LmStudioModelService } from "../model-service.ts";
import { Instances, parameter, specifierSchema } from "./instances.ts";
import { modelChannelEndpoints, modelRpcEndpoints } from "./model-endpoints.ts";
import { modelInfo } from "./model-info.ts";
import { applyPromptTemplateEndpoint, predictEndpoint } from "./predict.ts";
import type { Namespace } from "./socket-session.ts";
import type { RouteNeed } from "../../../keys/key-scopes.ts";

const log = logger("lmstudio-sdk");

/** The paths the SDK opens; only the first three are served. */
export const SDK_NAMESPACES = ["llm", "embedding", "system", "diagnostics", "files", "repository", "plugins", "runtime"] as const;

function llmNamespace(deps: ServerDeps, models: LmStudioModelService): Namespace {
  const instances = new Instances(models, "llm");
  return {
    name: "llm",
    rpc: { ...modelRpcEndpoints(instances), applyPromptTemplate: applyPromptTemplateEndpoint(deps, instances) },
    channels: { ...modelChannelEndpoints(instances), predict: predictEndpoint(deps, instances) },
    needs: { ...modelEndpointNeeds("chat"), applyPromptTemplate: "chat", predict: "chat" },
  };
}

function embeddingNamespace(models: LmStudioModelService): Namespace {
  const instances = new Instances(models, "embedding");
  return {
    name: "embedding",
    rpc: {
      ...modelRpcEndpoints(instances),
      embedString: async (value) => {
        const { modelSpecifier, inputString } = parameter(z.object({ modelSpecifier: specifierSchema, inputString: z.string() }), value, "embedString");
        const { engine } = await instances.engine(modelSpecifier);
        return { embedding: (await engine.embed(inputString)).embedding };
      },
    },
    channels: modelChannelEndpoints(instances),
    needs: { ...modelEndpointNeeds("embeddings"), embedString: "embeddings" },
  };
}

/** The shared model endpoints' needs: a model loaded just in time (getOrLoad) is a use of it, as on the REST routes. */
function modelEndpointNeeds(use: "chat" | "embeddings"): Record<string, RouteNeed> {
  return {
    listLoaded: "key", getModelInfo: "key", getLoadConfig: "key", tokenize: use, countTokens: use, getOrLoad: use,
    unloadModel: "admin", loadModel: "admin",
  };
}

function systemNamespace(models: LmStudioModelService): Namespace {
  return {
    name: "system",
    rpc: {
      // A file whose header cannot be read is left out, as the REST listing leaves out damaged models.
      listDownloadedModels: async () => models.list().flatMap((model) => {
        try {
          return [modelInfo(model)];
        } catch {
          return [];
        }
      }),
      version: async () => ({ version: llamuxVersion, build: 0 }),
      info: async () => ({ server: "llamux", version: llamuxVersion, llamaCpp: llamaCppRelease, platform: process.platform, arch: process.arch }),
      notify: async (value) => {
        log.info(`client notification: ${JSON.stringify(value).slice(0, 500)}`);
        return undefined;
      },
    },
    channels: {
      alive: (_value, channel) => new Promise<void>((resolve) => channel.signal.addEventListener("abort", () => resolve(), { once: true })),
    },
    needs: { listDownloadedModels: "key", version: "key", info: "key", notify: "key", alive: "key" },
  };
}

/** The namespaces of one listener, by path segment. */
export function sdkNamespaces(deps: ServerDeps, models: LmStudioModelService): Map<string, Namespace> {
  const served = [llmNamespace(deps, models), embeddingNamespace(models), systemNamespace(models)];
  const namespaces = new Map(served.map((ns) => [ns.name, ns]));
  for (const name of SDK_NAMESPACES) if (!namespaces.has(name)) namespaces.set(name, { name, rpc: {}, channels: {} });
  return namespaces;
}
