// The parts of the Hugging Face hub's HTTP API a pull needs: a repository's files with sizes and
// sha256s, download URLs, and model search. The address comes from HF_ENDPOINT and the token from
// HF_TOKEN, so tests point it at a hub-like server on loopback.
import { HttpStatusError, fetchFollowingRedirects } from "../http.ts";

export const DEFAULT_HUB_ENDPOINT = "https://huggingface.co";

export interface HubOptions {
  /** default: HF_ENDPOINT, else https://huggingface.co */
  endpoint?: string;
  /** default: HF_TOKEN */
  token?: string;
  signal?: AbortSignal;
}

export interface HubFile {
  /** path inside the repository, e.g. `Llama-3.2-1B-Instruct-Q4_K_M.gguf` */
  path: string;
  size?: number;
  /** hex sha256 of an LFS file (the hub's `lfs.oid`) */
  sha256?: string;
}

export interface HubModelSummary {
  id: string;
  downloads?: number;
  likes?: number;
  lastModified?: string;
  tags?: string[];
}

export function hubEndpoint(options: HubOptions = {}): string {
  return (options.endpoint ?? process.env.HF_ENDPOINT ?? DEFAULT_HUB_ENDPOINT).replace(/\/+$/, "");
}

function hubToken(options: HubOptions): string | undefined {
  return options.token ?? (process.env.HF_TOKEN || process.env.HUGGING_FACE_HUB_TOKEN || undefined);
}

/** The Authorization header for the hub, when a token is set. */
export function hubCredentials(options: HubOptions = {}): Record<string, string> {
  const token = hubToken(options);
  return token ? { Authorization: `Bearer ${token}` } : {};
}

const encodePath = (path: string) => path.split("/").map(encodeURIComponent).join("/");

export function hubDownloadUrl(repo: string, file: string, options: HubOptions = {}): string {
  return `${hubEndpoint(options)}/${repo}/resolve/main/${encodePath(file)}`;
}

/** A hub error in plain words, with the hint to set HF_TOKEN where a token would help. */
export function hubError(repo: string, error: unknown, options: HubOptions = {}): Error {
  if (!(error instanceof HttpStatusError)) return error as Error;
  const hasToken = hubToken(options) !== undefined;
  switch (error.status) {
    case 401:
      return new Error(
        hasToken
          ? `Cannot access "${repo}" on the Hugging Face hub (401): the token in HF_TOKEN is not valid for it, or the repository does not exist`
          : `Cannot access "${repo}" on the Hugging Face hub (401): the repository does not exist, or it is private or gated; set HF_TOKEN to an access token that can read it`,
        { cause: error },
      );
    case 403:
      return new Error(
        `Cannot access "${repo}" on the Hugging Face hub (403): access is restricted; accept the repository's conditions on the hub and set HF_TOKEN to a token of that account`,
        { cause: error },
      );
    case 404:
      return new Error(`Cannot find "${repo}" on the Hugging Face hub (404)`, { cause: error });
    default:
      return new Error(`The Hugging Face hub failed for "${repo}": ${error.message}`, { cause: error });
  }
}

/** The most one answer of the hub's API may send (a page of a repository's tree is far smaller). */
const MAX_API_ANSWER_BYTES = 8 << 20;

async function getJson(url: string, options: HubOptions): Promise<{ body: unknown; next?: string }> {
  const { response } = await fetchFollowingRedirects(url, {
    headers: { Accept: "application/json" },
    credentials: hubCredentials(options),
    maxBytes: MAX_API_ANSWER_BYTES,
    bodyLabel: "the hub's answer",
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("link") ?? "")?.[1];
  return { body: await response.json(), ...(next ? { next: new URL(next, url).toString() } : {}) };
}

interface TreeEntry { type?: string; path?: string; size?: number; lfs?: { oid?: string; size?: number } }
interface Sibling { rfilename?: string; size?: number; lfs?: { sha256?: string; size?: number } }

/** Every file of the repository's main branch, from the tree API (sizes and LFS sha256s), else the model's siblings. */
export async function listHubFiles(repo: string, options: HubOptions = {}): Promise<HubFile[]> {
  const endpoint = hubEndpoint(options);
  try {
    const files: HubFile[] = [];
    let url: string | undefined = `${endpoint}/api/models/${repo}/tree/main?recursive=true`;
    while (url) {
      const page: { body: unknown; next?: string } = await getJson(url, options);
      for (const entry of (Array.isArray(page.body) ? page.body : []) as TreeEntry[]) {
        if (entry.type !== "file" || typeof entry.path !== "string") continue;
        const size = entry.lfs?.size ?? entry.size;
        files.push({ path: entry.path, ...(size !== undefined ? { size } : {}), ...(entry.lfs?.oid ? { sha256: entry.lfs.oid } : {}) });
      }
      url = page.next;
    }
    return files;
  } catch (error) {
    // a hub (or mirror) without the tree API still lists the files as the model's siblings
    if (!(error instanceof HttpStatusError && error.status === 404)) throw hubError(repo, error, options);
  }
  try {
    const { body } = await getJson(`${endpoint}/api/models/${repo}?blobs=true`, options);
    const siblings = ((body as { siblings?: Sibling[] }).siblings ?? []).filter((s) => typeof s.rfilename === "string");
    return siblings.map((s) => {
      const size = s.lfs?.size ?? s.size;
      return { path: s.rfilename!, ...(size !== undefined ? { size } : {}), ...(s.lfs?.sha256 ? { sha256: s.lfs.sha256 } : {}) };
    });
  } catch (error) {
    throw hubError(repo, error, options);
  }
}

/** The sha256 and size the hub reports for a file on its download URL (`x-linked-etag`, `x-linked-size`). */
export async function headHubFile(repo: string, file: string, options: HubOptions = {}): Promise<HubFile> {
  try {
    const { firstHeaders } = await fetchFollowingRedirects(hubDownloadUrl(repo, file, options), {
      method: "HEAD",
      credentials: hubCredentials(options),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const etag = (firstHeaders.get("x-linked-etag") ?? "").replace(/^W\//, "").replace(/"/g, "");
    const size = Number(firstHeaders.get("x-linked-size") ?? firstHeaders.get("content-length") ?? NaN);
    return { path: file, ...(/^[0-9a-f]{64}$/.test(etag) ? { sha256: etag } : {}), ...(Number.isFinite(size) ? { size } : {}) };
  } catch (error) {
    throw hubError(repo, error, options);
  }
}

/** Models matching `query` (GGUF repositories only unless `gguf` is false), most downloaded first. */
export async function searchHubModels(query: string, options: HubOptions & { limit?: number; gguf?: boolean } = {}): Promise<HubModelSummary[]> {
  const params = new URLSearchParams({ search: query, limit: String(options.limit ?? 20), sort: "downloads", direction: "-1" });
  if (options.gguf !== false) params.set("filter", "gguf");
  try {
    const { body } = await getJson(`${hubEndpoint(options)}/api/models?${params}`, options);
    return ((Array.isArray(body) ? body : []) as Array<HubModelSummary & { modelId?: string }>).map((m) => ({
      id: m.id ?? m.modelId ?? "",
      ...(m.downloads !== undefined ? { downloads: m.downloads } : {}),
      ...(m.likes !== undefined ? { likes: m.likes } : {}),
      ...(m.lastModified !== undefined ? { lastModified: m.lastModified } : {}),
      ...(m.tags !== undefined ? { tags: m.tags } : {}),
    }));
  } catch (error) {
    throw hubError(`search "${query}"`, error, options);
  }
}
