// Hub search for the web UI's Search tab, through the same hub client as `pull` (HF_ENDPOINT, HF_TOKEN):
//   GET /api/v1/hub/search?q=TEXT&limit=N  -> {models: [{id, downloads, likes, last_modified}]}
//   GET /api/v1/hub/repo?id=ORG/REPO       -> {id, quantizations: [{quantization, file, size_bytes, recommended}],
//                                              projector: {file, size_bytes} | null}
// Quantizations come best-first (Q4_K_M, then the closest in size and quality); the first is recommended.
import type { Context } from "hono";
import { ApiError } from "../api-error.ts";
import type { Route } from "../route-table.ts";
import { listHubFiles, searchHubModels } from "../../store/hub/hub-api.ts";
import { chooseProjector, listQuantizations } from "../../store/hub/quantization.ts";

const REPO_ID = /^[\w.-]+\/[\w.-]+$/;

function hubFailure(error: unknown): ApiError {
  const message = (error as Error).message;
  const status = /\((401|403|404)\)/.exec(message)?.[1];
  return new ApiError(status === "404" ? 404 : 502, message, { cause: error });
}

async function hubSearch(c: Context) {
  const query = (c.req.query("q") ?? "").trim();
  const limit = Math.min(100, Math.max(1, Number(c.req.query("limit") ?? 20) || 20));
  const found = await searchHubModels(query, { limit, signal: c.req.raw.signal }).catch((error) => {
    throw hubFailure(error);
  });
  return c.json({
    models: found.map((m) => ({ id: m.id, downloads: m.downloads ?? null, likes: m.likes ?? null, last_modified: m.lastModified ?? null })),
  });
}

async function hubRepo(c: Context) {
  const id = c.req.query("id") ?? "";
  if (!REPO_ID.test(id)) throw new ApiError(400, `Cannot look up repository "${id}": expected "owner/name"`, { param: "id" });
  const files = await listHubFiles(id, { signal: c.req.raw.signal }).catch((error) => {
    throw hubFailure(error);
  });
  const quantizations = listQuantizations(files);
  const projector = chooseProjector(files);
  return c.json({
    id,
    quantizations: quantizations.map((q, i) => ({ quantization: q.quantization, file: q.file, size_bytes: q.size ?? null, recommended: i === 0 })),
    projector: projector ? { file: projector.path, size_bytes: projector.size ?? null } : null,
  });
}

/** The server reaches out to the hub for these: the admin scope, as downloads need. */
export function hubRoutes(): Route[] {
  return [
    { methods: ["GET"], path: "/api/v1/hub/search", needs: "admin", handler: hubSearch },
    { methods: ["GET"], path: "/api/v1/hub/repo", needs: "admin", handler: hubRepo },
  ];
}
