// What differs between the three personalities, as data: the shared code reads these fields and never
// asks which profile it serves. One file per profile (a.ts, b.ts, c.ts) fills them in.
import type { Hono, Context } from "hono";
import type { ModelManager } from "../../engine/model-manager.ts";
import type { UsageBook } from "../../keys/usage-book.ts";
import type { OptionValues } from "../../options/values.ts";
import type { ApiError } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";
import type { ModelService, ModelServiceOptions } from "../model-service.ts";
import type { ServerOptions } from "../server-options.ts";
import type { ModelStore } from "../../store/model-store.ts";

export type ProfileName = "a" | "b" | "c";

export interface Profile {
  name: ProfileName;
  /** The server this profile stands in for, for logs. */
  anchor: "Ollama" | "vLLM" | "LM Studio";
  defaultPort: number;
  /** Context per sequence when nothing else sets it; undefined means the model's trained context. */
  defaultContext: number | undefined;
  /** How long a model loaded on demand (not named on `serve`) may stay idle before it is unloaded. */
  idleUnloadMs: number;

  /** Parameters an OpenAI-style request (and LM Studio's native ones) omits, before the model's own. */
  openAiDefaults: OptionValues;
  /** Where a body spells one parameter several ways, these spellings win (vLLM's repetition_penalty). */
  preferredWireNames: readonly string[];
  /**
   * A chat or text completion whose prompt plus max_tokens exceed the context: "refuse" it (vLLM and LM
   * Studio answer 400) or "allow" it, the engine stopping where the context ends (Ollama).
   */
  replyOverflow: "refuse" | "allow";
  /** max_tokens -1 means "no limit" (LM Studio's clients send it); elsewhere it is a 400. */
  unlimitedMaxTokens: boolean;
  /** A request's `ttl` (seconds) sets the idle time of a model that request loads (LM Studio). */
  ttlOnLoad: boolean;
  /** /v1 bodies may set the context with `num_ctx` or `options.num_ctx` (what Ollama's users ask for). */
  v1ContextOption: boolean;
  /** /v1 bodies may name a `draft_model` for speculative decoding (LM Studio). */
  v1DraftModel: boolean;
  /**
   * The setting that gives a model this much context, as a "prompt is too long" error tells it: only where
   * the context does not grow to hold a request (vLLM's --max-model-len), as any other setting would not help.
   */
  contextSetting(tokens: number): string;
  /** A generative model asked for embeddings, refused in the anchor's words. */
  notAnEmbeddingModel(model: string): ApiError;
  /** GET /v1/models: every stored model in Ollama's card shape ("store"), or the served models ("served"). */
  modelList: "store" | "served";
  /** `owned_by` of a served model's card. */
  ownedBy: string;
  /** Rerank and score routes pass scores through a sigmoid unless the request's use_activation is false (vLLM's default); otherwise raw logits. */
  rerankActivation: boolean;
  /** POST /v1/audio/transcriptions exists (Ollama and vLLM serve it; LM Studio has none). */
  transcriptions: boolean;

  /** Body of an error on an OpenAI-compatible route. */
  openAiErrorBody(error: ApiError): unknown;
  /**
   * Body of an error on any route: the profile's native routes may have their own shape (the Messages
   * API answers in Anthropic's on every profile: profiles/index.ts adds that).
   */
  errorBody(error: ApiError, path: string): unknown;

  /** The profile's own routes, beside the shared OpenAI and Anthropic ones. */
  routes(deps: ServerDeps, options: ServerOptions): Hono;
  /** The answer to a path no route takes (default: a 404 in the profile's error shape). */
  notFound?(deps: ServerDeps): (c: Context) => Response;
  /** Paths served without a key besides the probes (LM Studio's SDK sockets carry their key in the protocol). */
  publicPaths: readonly string[];
  /** The web UI answers at "/" too (LM Studio's server page); elsewhere only at /ui. */
  webUiAtRoot: boolean;

  // How `llamux serve` sets up the profile's listener.
  /**
   * Ollama's environment variables set what the flags leave open: OLLAMA_HOST (when the profile serves
   * alone), OLLAMA_MODELS, OLLAMA_NUM_PARALLEL, OLLAMA_CONTEXT_LENGTH, OLLAMA_KEEP_ALIVE, OLLAMA_MAX_QUEUE,
   * OLLAMA_FLASH_ATTENTION, OLLAMA_KV_CACHE_TYPE, OLLAMA_ORIGINS, OLLAMA_DEBUG and OLLAMA_MAX_LOADED_MODELS.
   */
  ollamaEnvironment: boolean;
  /** The anchor's own variable for the API key, read when neither --api-key nor LLAMUX_API_KEY gives one. */
  apiKeyVariable?: string;
  /**
   * Where `serve MODEL` pulls a name the store lacks, when the profile serves alone: Ollama's registry, or
   * the Hugging Face hub, ORG/MODEL naming a repository (as vLLM and LM Studio name models).
   */
  pullsFrom: "ollama-registry" | "hub";
  /** --ctx-size (vLLM's --max-model-len) is a limit: a request that needs more context is refused rather than growing it. */
  contextFlagIsLimit: boolean;
  /** How many engines one model may have, and the words for a name that finds no model (defaults: ModelServiceOptions'). */
  modelRules: Pick<ModelServiceOptions, "instances" | "modelNotFound">;
  /**
   * The listener's model service. `loadServed`, where the profile shows the model named on `serve` as loaded
   * from the start (as `lms load` leaves it), loads it: serve calls it when the profile serves alone.
   */
  modelService(manager: ModelManager, served: ServedModelFiles, options: ModelServiceOptions & { store: ModelStore }): { models: ModelService; loadServed?(): Promise<void> };
  /** The model named on `serve` loads at start, and /health answers 503 until it has (vLLM is not up before its model). */
  loadsBeforeReady: boolean;
  /** With --mcp, LM Studio's own ~/.lmstudio/mcp.json is read beside llamux's. */
  lmStudioMcpConfig: boolean;
  /** The profile's metrics (vLLM's /metrics), spread into the listener's deps. */
  metrics?(manager: ModelManager, models: ModelService, keyUsage: UsageBook): Pick<ServerDeps, "observer" | "metrics">;
  /** LM Studio's SDK sockets answer on the discovery port too (--sdk-port), where LMStudioClient() looks. */
  sdkDiscovery: boolean;
}

/** The model files named on `serve`, as a model service takes them. */
export type ServedModelFiles = ConstructorParameters<typeof ModelService>[1];
