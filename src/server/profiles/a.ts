// Profile a: Ollama (port 11434, /api/*, Modelfiles).
import { ApiError } from "../api-error.ts";
import { EngineError } from "../../engine/types.ts";
import { ModelService } from "../model-service.ts";
import { pullHintNotFound } from "../ollama/model-request.ts";
import { ollamaNotFound, ollamaRoutes } from "../ollama/routes.ts";
import { ollamaOpenAiError } from "./openai-errors.ts";
import type { Profile } from "./profile.ts";

/** What Ollama's runner answers a chat-only model asked for embeddings (clients match this text). */
export const OLLAMA_NO_EMBEDDINGS = "this model does not support embeddings";

/** Ollama's answer when its queue is full (OLLAMA_MAX_QUEUE). */
export const OLLAMA_SERVER_BUSY = "server busy, please try again.  maximum pending requests exceeded";

const isFullQueue = (error: ApiError) => error.status === 503 && error.cause instanceof EngineError && error.cause.code === "busy";

export const profileA: Profile = {
  name: "a",
  anchor: "Ollama",
  defaultPort: 11434,
  defaultContext: 4096,
  idleUnloadMs: 5 * 60_000,
  // Ollama's /v1 sets temperature and top_p to 1.0 when absent; the rest are its DefaultOptions.
  openAiDefaults: { temperature: 1, topP: 1, topK: 40, minP: 0, repeatPenalty: 1, repeatLastN: 64 },
  preferredWireNames: ["repeat_penalty"],
  replyOverflow: "allow",
  unlimitedMaxTokens: false,
  ttlOnLoad: false,
  v1ContextOption: true,
  v1DraftModel: false,
  contextSetting: (tokens) => `start the server with OLLAMA_CONTEXT_LENGTH=${tokens} (or --ctx-size ${tokens})`,
  notAnEmbeddingModel: () => new ApiError(501, OLLAMA_NO_EMBEDDINGS, { param: "model" }),
  modelList: "store",
  ownedBy: "library",
  rerankActivation: false,
  transcriptions: true,
  openAiErrorBody: ollamaOpenAiError,
  // Ollama's native /api/* routes (and /v1/systemone) answer {"error": "..."}; a full queue in Ollama's words
  // (two spaces and all), any other 503 (an RPC server that cannot be reached) in its own.
  errorBody(error, path) {
    if (!path.startsWith("/api/") && path !== "/v1/systemone") return ollamaOpenAiError(error);
    return { error: isFullQueue(error) ? OLLAMA_SERVER_BUSY : error.message };
  },
  routes: (deps) => ollamaRoutes(deps),
  notFound: ollamaNotFound,
  publicPaths: [],
  webUiAtRoot: false,
  ollamaEnvironment: true,
  pullsFrom: "ollama-registry",
  contextFlagIsLimit: false,
  // Ollama keeps one instance of a model and names a missing one with a hint to pull it.
  modelRules: { instances: "one", modelNotFound: pullHintNotFound },
  modelService: (manager, served, options) => ({ models: new ModelService(manager, served, options) }),
  loadsBeforeReady: false,
  lmStudioMcpConfig: false,
  sdkDiscovery: false,
};
