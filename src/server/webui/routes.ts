// The web UI of every listener (at /ui; profile c also at /, as LM Studio's app is its face) and the
// few server routes only the UI needs:
//   GET  /ui, /ui/app.js                  the page and its bundled script (public: the page asks for the key)
//   GET  /api/v1/hub/search, /api/v1/hub/repo   hub search (hub-routes.ts)
//   GET  /api/v1/server/status            -> {version, profile, anchor, api_key_required, host, port, runtime (llama.cpp
//                                            build or null), loaded: [{model, path, compute (CPU/GPU), context_length,
//                                            sequences, gpu_layers}]}
//   GET  /api/v1/server/requests?after=ID -> {requests: [{id, at, method, path, status, latency_ms, prompt_tokens, completion_tokens, stream}]},
//                                            the requests of the caller's own API key only
//   POST /api/v1/models/delete {model}    -> {deleted: model}; unloads it first (LM Studio's REST API has no delete)
// Models are listed, loaded, unloaded and downloaded through LM Studio's /api/v1 routes; chat uses /v1.
import { type Context, Hono } from "hono";
import { mountRoutes, type Route } from "../route-table.ts";
import { runtimeVariant } from "../../engine/runtime-variant.ts";
import packageJson from "../../../package.json" with { type: "json" };
import { ApiError, badRequest, notFound } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";
import { keyOwner } from "../middleware/api-key.ts";
import { keysRequired, type ServerOptions } from "../server-options.ts";
import { ModelStore } from "../../store/model-store.ts";
import { bundleWebUi } from "./bundle.ts" with { type: "macro" };
import { hubRoutes } from "./hub-routes.ts";
import { webUiPage } from "./page.ts";
import { WEB_UI_CONTENT_SECURITY_POLICY } from "../middleware/security-headers.ts";
import type { RequestHistory } from "./request-history.ts";

/** The page and its script need no key: the page asks for one when the API answers 401. */
export const WEB_UI_PUBLIC_PATHS = ["/ui", "/ui/", "/ui/app.js"];

const appScript: string = bundleWebUi();

export interface WebUiSetup {
  deps: ServerDeps;
  options: ServerOptions;
  history: RequestHistory;
  /** The model store (default: the one LLAMUX_MODELS names). */
  store?: () => ModelStore;
}

export function webUiRoutes(setup: WebUiSetup): Hono {
  const { deps, options, history } = setup;
  // Profile c's model service has the store its listings come from; other profiles open LLAMUX_MODELS's.
  const serviceStore = (deps.models as { store?: unknown }).store;
  const openStore = setup.store ?? (() => (serviceStore instanceof ModelStore ? serviceStore : ModelStore.open({ ollamaModels: deps.profile.ollamaEnvironment })));
  const app = new Hono();
  const page = webUiPage(`llamux · ${deps.profile.anchor} profile`);
  const servePage = (c: Context) => c.html(page, 200, { "Content-Security-Policy": WEB_UI_CONTENT_SECURITY_POLICY });

  const status = (c: Context) => {
    const url = new URL(c.req.url);
    return c.json({
      version: packageJson.version,
      profile: deps.profile.name,
      anchor: deps.profile.anchor,
      api_key_required: keysRequired(options),
      host: options.bindHost,
      port: Number(url.port || (url.protocol === "https:" ? 443 : 80)),
      runtime: runtimeVariant(),
      loaded: deps.models.loaded().map((loaded) => ({
        model: loaded.model.id,
        path: loaded.model.path,
        compute: loaded.engine.info.compute,
        context_length: loaded.engine.info.contextPerSequence,
        sequences: loaded.engine.info.sequences,
        gpu_layers: loaded.engine.options.gpuLayers ?? null,
      })),
    });
  };

  // Each key sees its own requests, as it sees only its own stored objects.
  const requests = (c: Context) => {
    const after = Number(c.req.query("after") ?? 0) || 0;
    return c.json({
      requests: history.since(keyOwner(c), after).map((r) => ({
        id: r.id, at: r.at, method: r.method, path: r.path, status: r.status, latency_ms: Math.round(r.latencyMs * 10) / 10,
        prompt_tokens: r.usage?.promptTokens ?? null, completion_tokens: r.usage?.completionTokens ?? null, stream: r.stream ?? null,
      })),
    });
  };

  const deleteModel = async (c: Context) => {
    const body = (await c.req.json().catch(() => null)) as { model?: unknown } | null;
    if (typeof body?.model !== "string" || body.model === "") throw badRequest("Cannot delete: \"model\" must be a model key", "model");
    const store = openStore();
    const stored = store.find(body.model);
    if (!stored) throw notFound(`Cannot delete model "${body.model}": it is not installed`, "model");
    const resolved = store.resolve(stored.name);
    for (const loaded of deps.models.loaded()) {
      if (resolved && loaded.engine.options.modelPath === resolved.modelPath) await deps.models.unload(loaded.model);
    }
    await store.remove(stored.name).catch((error) => {
      throw new ApiError(500, `Cannot delete model "${stored.name}": ${(error as Error).message}`, { cause: error });
    });
    return c.json({ deleted: stored.name });
  };

  const table: Route[] = [
    // the page and its script: public (WEB_UI_PUBLIC_PATHS), so the page can ask for a key
    { methods: ["GET"], path: "/ui", needs: "key", handler: servePage },
    { methods: ["GET"], path: "/ui/", needs: "key", handler: servePage },
    ...(deps.profile.webUiAtRoot ? [{ methods: ["GET"], path: "/", needs: "key", handler: servePage } satisfies Route] : []),
    { methods: ["GET"], path: "/ui/app.js", needs: "key", handler: (c) => c.body(appScript, 200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-cache" }) },
    ...hubRoutes(),
    { methods: ["GET"], path: "/api/v1/server/status", needs: "key", handler: status },
    { methods: ["GET"], path: "/api/v1/server/requests", needs: "key", handler: requests },
    { methods: ["POST"], path: "/api/v1/models/delete", needs: "admin", handler: deleteModel },
  ];
  mountRoutes(app, table);

  return app;
}
