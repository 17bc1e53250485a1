// Profile c's own endpoints (the LM Studio personality), over the same /v1 handlers and model
// manager as every profile. Errors are OpenAI-shaped ({"error": {message, type, param, code}}) except
// under /api/v1/, where they are LM Studio's ({"error": {type: invalid_request|model_not_found|
// job_not_found|not_implemented|internal_error, message, code?, param?}}; v1-error.ts).
//
// GET  /lmstudio-greeting                  {"lmstudio": true, "version"}: how `lms` and SDKs recognise the server
// GET  /llm /embedding /system …           WebSocket upgrade to LM Studio's SDK protocol (sdk/namespaces.ts)
//
// REST API v0 (LM Studio 0.3.6+)
// GET  /api/v0/models                      {object: "list", data: [V0Model]}
// GET  /api/v0/models/{id}                 V0Model = {id, object: "model", type: "llm"|"vlm"|"embeddings", publisher,
//                                          arch, compatibility_type: "gguf", quantization, state: "loaded"|"not-loaded",
//                                          max_context_length, capabilities?: ["tool_use"]}
// POST /api/v0/chat/completions            the /v1 body, and when not streamed also
// POST /api/v0/completions                   stats: {tokens_per_second, time_to_first_token (s), generation_time (s),
//                                              stop_reason: eosFound|stopStringFound|maxPredictedTokensReached|
//                                              contextLengthReached|toolCalls|userStopped}
//                                            model_info: {arch, quant, format: "gguf", context_length}
//                                            runtime: {name, version, supported_formats: ["gguf"]}
// POST /api/v0/embeddings                  as /v1/embeddings
//
// REST API v1 (LM Studio 0.4+; what the web UI and `lms` build on)
// POST /api/v1/chat                        {model, input: string | [{type: "message", content} | {type: "image", data_url}],
//                                          system_prompt?, stream?, temperature?, top_p?, top_k?, min_p?,
//                                          repeat_penalty?, max_output_tokens?, reasoning?: "off"|"low"|"medium"|"high"|"on",
//                                          context_length?, ttl?, store? (default true), previous_response_id?}; integrations
//                                          (MCP) are a 501
//                                          -> {model_instance_id, output: [{type: "reasoning", content}?, {type: "message",
//                                          content}], stats: {input_tokens, total_output_tokens, reasoning_output_tokens,
//                                          tokens_per_second, time_to_first_token_seconds, model_load_time_seconds?},
//                                          response_id? (when stored)}
//                                          streamed: SSE `event: <type>` + `data: {type, ...}`: chat.start {model_instance_id},
//                                          model_load.start/.end (when it loads), prompt_processing.start/.end,
//                                          reasoning.start/.delta {content}/.end, message.start/.delta {content}/.end,
//                                          error {error: {type, message, ...}}, chat.end {result: the body above}
// GET  /api/v1/models                      {models: [{type: "llm"|"embedding", publisher, key, display_name, architecture,
//                                          quantization: {name, bits_per_weight}, size_bytes, params_string,
//                                          loaded_instances: [{id, config: {context_length, eval_batch_size, flash_attention,
//                                          num_experts? (MoE), offload_kv_cache_to_gpu, parallel, gpu_layers?}}], max_context_length,
//                                          format: "gguf", capabilities: {vision, trained_for_tool_use, reasoning?},
//                                          description: null}]}
//                                          (an embedding model's config has only context_length; it has no
//                                          architecture, capabilities or description)
// POST /api/v1/models/load                 {model, context_length?, eval_batch_size?, flash_attention?, num_experts?,
//                                          offload_kv_cache_to_gpu?, gpu_layers? (llamux), parallel?, ttl? (s; default
//                                          never), echo_load_config?}; the options may also come nested in `config`
//                                          -> {type, instance_id, load_time_seconds, status: "loaded", load_config?}
// POST /api/v1/models/unload               {instance_id} -> {instance_id}; a model's name instead unloads all its instances
// POST /api/v1/models/download             {model: "org/repo" | hub https URL | store name, quantization?}
//                                          -> the job's status (below), once its size is known; the download goes on
//                                          in the background. A model already stored: {status: "already_downloaded",
//                                          model} and no job
// GET  /api/v1/models/download/status/{job_id}
//                                          {job_id, status: "downloading"|"completed"|"failed", total_size_bytes,
//                                          downloaded_bytes, started_at,
//                                          bytes_per_second? and estimated_completion? (while downloading),
//                                          completed_at?, model? (the stored name), error? (when failed)}
import { Hono } from "hono";
import type { KeyAccess } from "../../keys/key-access.ts";
import { mountRoutes, type Route } from "../route-table.ts";
import { sdkSocketRoutes } from "./sdk/websocket.ts";
import { llamuxVersion } from "../../version.ts";
import type { ServerDeps } from "../deps.ts";
import { chatCompletions } from "../openai/chat-completions.ts";
import { completions } from "../openai/completions.ts";
import { embeddings } from "../openai/embeddings.ts";
import { ChatThreads } from "./chat-threads.ts";
import { DownloadJobs } from "./download-jobs.ts";
import { LmStudioModelService } from "./model-service.ts";
import { lmStudioStats } from "./v0-stats.ts";
import { v0ListModels, v0RetrieveModel } from "./v0-models.ts";
import { v1Chat } from "./v1-chat.ts";
import { v1Download, v1DownloadStatus } from "./v1-download.ts";
import { v1ListModels, v1LoadModel, v1UnloadModel } from "./v1-models.ts";

function routeTable(deps: ServerDeps, models: LmStudioModelService, jobs: DownloadJobs, threads: ChatThreads, access: KeyAccess | undefined): Route[] {
  return [
    // LM Studio's SDK protocol: WebSocket upgrades at /llm, /embedding, /system, … (sdk/namespaces.ts); the
    // socket's key comes in its handshake, and each endpoint's scope is in the namespaces' own table
    ...sdkSocketRoutes(deps, models, access).map(({ path, handler }): Route => ({ methods: ["GET"], path, needs: "key", handler })),
    { methods: ["GET"], path: "/lmstudio-greeting", needs: "key", handler: (c) => c.json({ lmstudio: true, version: llamuxVersion }) },
    // REST API v0
    { methods: ["GET"], path: "/api/v0/models", needs: "key", handler: v0ListModels(models) },
    { methods: ["GET"], path: "/api/v0/models/:id{.+}", needs: "key", handler: v0RetrieveModel(models) },
    { methods: ["POST"], path: "/api/v0/chat/completions", needs: "chat", handler: chatCompletions(deps, lmStudioStats) },
    { methods: ["POST"], path: "/api/v0/completions", needs: "chat", handler: completions(deps, lmStudioStats) },
    { methods: ["POST"], path: "/api/v0/embeddings", needs: "embeddings", handler: embeddings(deps) },
    // REST API v1: chat
    { methods: ["POST"], path: "/api/v1/chat", needs: "chat", handler: v1Chat(deps, models, threads) },
    // REST API v1: models (listing needs any key; loading, unloading and downloading the admin scope)
    { methods: ["GET"], path: "/api/v1/models", needs: "key", handler: v1ListModels(models) },
    { methods: ["POST"], path: "/api/v1/models/load", needs: "admin", handler: v1LoadModel(models) },
    { methods: ["POST"], path: "/api/v1/models/unload", needs: "admin", handler: v1UnloadModel(models) },
    { methods: ["POST"], path: "/api/v1/models/download", needs: "admin", handler: v1Download(models, jobs) },
    { methods: ["GET"], path: "/api/v1/models/download/status/:job_id", needs: "admin", handler: v1DownloadStatus(jobs) },
  ];
}

/** Needs the LM Studio model service (store-backed, JIT loading), which `serve` gives profile c. */
export function lmStudioRoutes(deps: ServerDeps, access: KeyAccess | undefined): Hono {
  const models = deps.models;
  if (!(models instanceof LmStudioModelService)) throw new TypeError("Cannot serve LM Studio routes: profile c needs an LmStudioModelService");
  const jobs = new DownloadJobs(models.store);
  const threads = new ChatThreads();
  return mountRoutes(new Hono(), routeTable(deps, models, jobs, threads, access));
}
