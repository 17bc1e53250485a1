// Profile b: vLLM's OpenAI-compatible server (port 8000, /health, /tokenize, /metrics, …).
import { ApiError } from "../api-error.ts";
import { ModelService } from "../model-service.ts";
import { createVllmMetrics } from "../vllm/metrics.ts";
import { vllmRoutes } from "../vllm/routes.ts";
import { vllmOpenAiError } from "./openai-errors.ts";
import type { Profile } from "./profile.ts";

export const profileB: Profile = {
  name: "b",
  anchor: "vLLM",
  defaultPort: 8000,
  defaultContext: undefined,
  idleUnloadMs: 5 * 60_000,
  openAiDefaults: { temperature: 1, topP: 1, topK: 0, minP: 0, repeatPenalty: 1 },
  preferredWireNames: ["repetition_penalty"],
  replyOverflow: "refuse",
  unlimitedMaxTokens: false,
  ttlOnLoad: false,
  v1ContextOption: false,
  v1DraftModel: false,
  contextSetting: (tokens) => `start the server with --max-model-len ${tokens}`,
  // vLLM has no embeddings route for a generate model.
  notAnEmbeddingModel: () => new ApiError(400, "The model does not support Embeddings API", { param: "model" }),
  modelList: "served",
  ownedBy: "vllm",
  rerankActivation: true,
  transcriptions: true,
  openAiErrorBody: vllmOpenAiError,
  // vLLM's auth middleware (the only source of a 401) runs outside its OpenAI error handling.
  errorBody: (error) => (error.status === 401 ? { error: "Unauthorized" } : vllmOpenAiError(error)),
  routes: (deps) => vllmRoutes(deps),
  publicPaths: [],
  webUiAtRoot: false,
  ollamaEnvironment: false,
  apiKeyVariable: "VLLM_API_KEY",
  pullsFrom: "hub",
  contextFlagIsLimit: true,
  modelRules: {},
  modelService: (manager, served, options) => ({ models: new ModelService(manager, served, options) }),
  loadsBeforeReady: true,
  lmStudioMcpConfig: false,
  metrics: createVllmMetrics,
  sdkDiscovery: false,
};
