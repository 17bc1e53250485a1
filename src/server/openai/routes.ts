// The OpenAI-compatible surface every profile serves.
import { Hono } from "hono";
import type { ServerDeps } from "../deps.ts";
import type { Route } from "../route-table.ts";
import { mountRoutes } from "../route-table.ts";
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

function routeTable(deps: ServerDeps): Route[] {
  return [
    // generation
    { methods: ["POST"], path: "/v1/chat/completions", needs: "chat", handler: chatCompletions(deps) },
    { methods: ["POST"], path: "/v1/completions", needs: "chat", handler: completions(deps) },
    { methods: ["POST"], path: "/v1/responses", needs: "chat", handler: responses(deps, new ResponseStore()) },
    { methods: ["POST"], path: "/v1/embeddings", needs: "embeddings", handler: embeddings(deps) },
    // speech to text, as Ollama and vLLM serve it (LM Studio has no such route)
    ...(deps.profile.transcriptions ? [{ methods: ["POST"], path: "/v1/audio/transcriptions", needs: "audio", handler: transcriptions(deps) } satisfies Route] : []),
    // text to speech (OpenAI's; on every profile, for the models that speak)
    { methods: ["POST"], path: "/v1/audio/speech", needs: "audio", handler: speech(deps) },
    // spoken conversations over a WebSocket (OpenAI's Realtime API: audio in, text and speech out)
    { methods: ["GET"], path: "/v1/realtime", needs: "chat", handler: realtime(deps) },
    // reranking (vLLM's; on profiles a and c an extension)
    { methods: ["POST"], path: "/v1/rerank", needs: "embeddings", handler: rerank(deps) },
    // models (ids may contain "/", as in org/model)
    { methods: ["GET"], path: "/v1/models", needs: "key", handler: listModels(deps) },
    { methods: ["GET"], path: "/v1/models/:id{.+}", needs: "key", handler: retrieveModel(deps) },
  ];
}

export function openAiRoutes(deps: ServerDeps): Hono {
  return mountRoutes(new Hono(), routeTable(deps));
}
