// The OpenAI-compatible surface every profile serves.
import { Hono } from "hono";
import type { ServerDeps } from "../deps.ts";
import { chatCompletions } from "./chat-completions.ts";
import { completions } from "./completions.ts";
import { embeddings } from "./embeddings.ts";
import { listModels, retrieveModel } from "./models.ts";
import { ResponseStore } from "./response-store.ts";
import { responses } from "./responses.ts";
import { rerank } from "../rerank/rerank-routes.ts";
import { transcriptions } from "./transcriptions.ts";
import { speech } from "./speech.ts";
import { realtime } from "./realtime/realtime-route.ts";

export function openAiRoutes(deps: ServerDeps): Hono {
  const routes = new Hono();
  // generation
  routes.post("/v1/chat/completions", chatCompletions(deps));
  routes.post("/v1/completions", completions(deps));
  routes.post("/v1/responses", responses(deps, new ResponseStore()));
  routes.post("/v1/embeddings", embeddings(deps));
  // speech to text, as Ollama and vLLM serve it (LM Studio has no such route)
  if (deps.profile.transcriptions) routes.post("/v1/audio/transcriptions", transcriptions(deps));
  // text to speech (OpenAI's; on every profile, for the models that speak)
  routes.post("/v1/audio/speech", speech(deps));
  // spoken conversations over a WebSocket (OpenAI's Realtime API: audio in, text and speech out)
  routes.get("/v1/realtime", realtime(deps));
  // reranking (vLLM's; on profiles a and c an extension)
  routes.post("/v1/rerank", rerank(deps));
  // models (ids may contain "/", as in org/model)
  routes.get("/v1/models", listModels(deps));
  routes.get("/v1/models/:id{.+}", retrieveModel(deps));
  return routes;
}
