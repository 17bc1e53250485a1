// The vLLM server's own endpoints, beside /v1 (reference/vllm.md §2); mounted for profile b only.
import { Hono } from "hono";
import type { ServerDeps } from "../deps.ts";
import { mountRoutes, type Route } from "../route-table.ts";
import { detokenize } from "./detokenize.ts";
import { health } from "./health.ts";
import { metricsRoute } from "./metrics-route.ts";
import { tokenize } from "./tokenize.ts";
import { rerank, score } from "../rerank/rerank-routes.ts";
import { version } from "./version.ts";
import { loadLoraAdapter, unloadLoraAdapter } from "./lora-adapter-routes.ts";

function routeTable(deps: ServerDeps): Route[] {
  return [
    // readiness (SageMaker probes /ping): 503 until the command line's model has loaded
    { methods: ["GET"], path: "/health", needs: "key", handler: health(deps) },
    { methods: ["GET", "POST"], path: "/ping", needs: "key", handler: health(deps) },
    { methods: ["GET"], path: "/version", needs: "key", handler: version() },
    // tokenizer
    { methods: ["POST"], path: "/tokenize", needs: "chat", handler: tokenize(deps) },
    { methods: ["POST"], path: "/detokenize", needs: "chat", handler: detokenize(deps) },
    // reranking and cross-encoder scoring (/v1/rerank is on every profile's OpenAI routes)
    { methods: ["POST"], path: "/rerank", needs: "embeddings", handler: rerank(deps) },
    { methods: ["POST"], path: "/v2/rerank", needs: "embeddings", handler: rerank(deps, { cohere: true }) },
    { methods: ["POST"], path: "/score", needs: "embeddings", handler: score(deps) },
    { methods: ["POST"], path: "/v1/score", needs: "embeddings", handler: score(deps) },
    // Prometheus; vLLM mounts it as a prefix, so /metrics/ answers too. Per-key counters name every key:
    // admin only (or anyone with --public-metrics, which makes the path public).
    ...(deps.metrics ? [{ methods: ["GET"], path: "/metrics/*", needs: "admin", handler: metricsRoute(deps.metrics) } satisfies Route] : []),
    // LoRA adapters loaded and unloaded at run time: only with VLLM_ALLOW_RUNTIME_LORA_UPDATING, as vLLM
    ...(deps.runtimeLoraUpdating
      ? [
        { methods: ["POST"], path: "/v1/load_lora_adapter", needs: "admin", handler: loadLoraAdapter(deps) },
        { methods: ["POST"], path: "/v1/unload_lora_adapter", needs: "admin", handler: unloadLoraAdapter(deps) },
      ] satisfies Route[]
      : []),
  ];
}

export function vllmRoutes(deps: ServerDeps): Hono {
  return mountRoutes(new Hono(), routeTable(deps));
}
