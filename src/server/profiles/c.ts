// Profile c: LM Studio's server (port 1234, /api/v0, /api/v1, the SDK's WebSocket protocol, the web UI).
import { ApiError } from "../api-error.ts";
import { LmStudioModelService } from "../lmstudio/model-service.ts";
import { lmStudioRoutes } from "../lmstudio/routes.ts";
import { SDK_SOCKET_PATHS } from "../lmstudio/sdk/websocket.ts";
import { lmStudioV1ErrorBody } from "../lmstudio/v1-error.ts";
import { lmStudioOpenAiError } from "./openai-errors.ts";
import type { Profile } from "./profile.ts";

export const profileC: Profile = {
  name: "c",
  anchor: "LM Studio",
  defaultPort: 1234,
  defaultContext: 4096,
  // LM Studio's default TTL for models loaded just in time.
  idleUnloadMs: 60 * 60_000,
  openAiDefaults: { temperature: 1, topP: 1, topK: 40, minP: 0, repeatPenalty: 1 },
  preferredWireNames: ["repeat_penalty"],
  replyOverflow: "refuse",
  unlimitedMaxTokens: true,
  ttlOnLoad: true,
  v1ContextOption: false,
  v1DraftModel: true,
  contextSetting: (tokens) => `start the server with --ctx-size ${tokens}`,
  // LM Studio cannot load a generative model as an embedding model.
  notAnEmbeddingModel: (model) => new ApiError(404, `Failed to load model "${model}". Error: Model is not embedding.`, { param: "model", code: "model_not_found" }),
  modelList: "served",
  ownedBy: "organization_owner",
  rerankActivation: false,
  transcriptions: false,
  openAiErrorBody: lmStudioOpenAiError,
  // LM Studio's REST API v1 has its own error type words.
  errorBody: (error, path) => (path.startsWith("/api/v1/") ? lmStudioV1ErrorBody(error) : lmStudioOpenAiError(error)),
  routes: (deps, options) => lmStudioRoutes(deps, options.keyAccess),
  publicPaths: SDK_SOCKET_PATHS,
  webUiAtRoot: true,
  ollamaEnvironment: false,
  pullsFrom: "hub",
  contextFlagIsLimit: false,
  modelRules: {},
  // Store names load just in time, any other name gets the loaded model (LM Studio's way of picking models).
  modelService(manager, served, options) {
    const models = new LmStudioModelService(manager, served, options);
    return { models, loadServed: () => models.loadServed() };
  },
  loadsBeforeReady: false,
  lmStudioMcpConfig: true,
  sdkDiscovery: true,
};
