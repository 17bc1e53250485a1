// The vLLM server's own endpoints, beside /v1 (reference/vllm.md §2); mounted for profile b only.
import { Hono } from "hono";
import type { ServerDeps } from "../deps.ts";
import { detokenize } from "./detokenize.ts";
import { health } from "./health.ts";
import { metricsRoute } from "./metrics-route.ts";
import { tokenize } from "./tokenize.ts";
import { rerank, score } from "../rerank/rerank-routes.ts";
import { version } from "./version.ts";

export function vllmRoutes(deps: ServerDeps): Hono {
  const routes = new Hono();
  // readiness (SageMaker probes /ping): 503 until the command line's model has loaded
  routes.get("/health", health(deps));
  routes.on(["GET", "POST"], "/ping", health(deps));
  routes.get("/version", version());
  // tokenizer
  routes.post("/tokenize", tokenize(deps));
  routes.post("/detokenize", detokenize(deps));
  // reranking and cross-encoder scoring (/v1/rerank is on every profile's OpenAI routes)
  routes.post("/rerank", rerank(deps));
  routes.post("/v2/rerank", rerank(deps, { cohere: true }));
  routes.post("/score", score(deps));
  routes.post("/v1/score", score(deps));
  // Prometheus; vLLM mounts it as a prefix, so /metrics/ answers too
  if (deps.metrics) routes.get("/metrics/*", metricsRoute(deps.metrics));
  return routes;
}
