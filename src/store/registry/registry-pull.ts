// Pulls a model from an Ollama registry with the Docker registry v2 subset Ollama uses: the manifest at
// /v2/<namespace>/<model>/manifests/<tag>, each blob at /v2/<namespace>/<model>/blobs/<digest>. The
// manifest and layers are stored as they come (so ids match Ollama's), except that an Ollama-named
// LFM2 model layer is replaced by its repaired copy.
import { downloadBlob } from "../download.ts";
import { HttpStatusError, bodyExcerpt, fetchFollowingRedirects } from "../http.ts";
import { MANIFEST_MEDIA_TYPE, MAX_MANIFEST_BYTES, layerMediaType, parseManifest, serializeManifest } from "../manifest.ts";
import { checkModelLayer } from "../model-layer.ts";
import { DEFAULT_HOST, type ModelName, formatModelName } from "../model-name.ts";
import type { ModelStore } from "../model-store.ts";
import type { PullOptions } from "../pull.ts";
import { defaultRegistryKeyPath, loadRegistryKey } from "./registry-key.ts";
import { parseChallenge, registryToken } from "./registry-token.ts";

export const DEFAULT_REGISTRY = "https://registry.ollama.ai";

/** `registry` (else OLLAMA_REGISTRY) for the default host; `https://<host>` for a name that names its registry. */
export function registryBaseUrl(name: ModelName, registry?: string): string {
  if (name.host === DEFAULT_HOST) return (registry || process.env.OLLAMA_REGISTRY || DEFAULT_REGISTRY).replace(/\/+$/, "");
  return `https://${name.host}`;
}

/** On 401, a token from the realm the challenge names, signed with the registry key when there is one. */
async function bearerToken(challengeHeader: string, registry: string, signal?: AbortSignal): Promise<string | undefined> {
  const challenge = parseChallenge(challengeHeader);
  if (!challenge) return undefined;
  try {
    const key = loadRegistryKey(defaultRegistryKeyPath(), { create: false });
    return await registryToken(challenge, new URL(registry).host, key, signal);
  } catch {
    return undefined;
  }
}

async function fetchManifest(url: string, registry: string, signal?: AbortSignal): Promise<{ text: string; credentials: Record<string, string> }> {
  const init = { headers: { Accept: MANIFEST_MEDIA_TYPE }, maxBytes: MAX_MANIFEST_BYTES, bodyLabel: "the manifest", ...(signal ? { signal } : {}) };
  let credentials: Record<string, string> = {};
  try {
    let { response } = await fetchFollowingRedirects(url, { ...init, allow: [401] });
    if (response.status === 401) {
      const body = bodyExcerpt(await response.text());
      const token = await bearerToken(response.headers.get("www-authenticate") ?? "", registry, signal);
      if (!token) throw new HttpStatusError(401, url, body);
      credentials = { Authorization: `Bearer ${token}` };
      ({ response } = await fetchFollowingRedirects(url, { ...init, credentials }));
    }
    return { text: await response.text(), credentials };
  } catch (error) {
    if (error instanceof HttpStatusError) {
      if (error.status === 404) throw new Error("pull model manifest: file does not exist", { cause: error });
      throw new Error(`pull model manifest: ${error.status}: ${error.body}`, { cause: error });
    }
    throw new Error(`pull model manifest: ${(error as Error).message}`, { cause: error });
  }
}

/** Pulls a registry model; returns the name it is stored under. */
export async function pullFromRegistry(store: ModelStore, name: ModelName, options: PullOptions = {}): Promise<string> {
  const registry = registryBaseUrl(name, options.registry);
  const repository = `${registry}/v2/${name.namespace}/${name.model}`;
  options.onProgress?.({ status: "pulling manifest" });
  const { text, credentials } = await fetchManifest(`${repository}/manifests/${name.tag}`, registry, options.signal);
  const manifest = parseManifest(text, formatModelName(name));

  for (const layer of [...manifest.layers, manifest.config]) {
    await downloadBlob(store, {
      url: `${repository}/blobs/${layer.digest}`,
      digest: layer.digest,
      size: layer.size,
      credentials,
      label: `layer ${layer.digest.slice(7, 19)} of ${formatModelName(name)}`,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.retries !== undefined ? { retries: options.retries } : {}),
    });
  }
  options.onProgress?.({ status: "verifying sha256 digest" });
  let bytes = text;
  const modelIndex = manifest.layers.findIndex((layer) => layer.mediaType === layerMediaType.model);
  if (modelIndex >= 0) {
    const checked = await checkModelLayer(store, manifest.layers[modelIndex]!, `the model layer of ${formatModelName(name)}`, options.onProgress);
    if (checked.repairs.length > 0) {
      manifest.layers[modelIndex] = checked.layer;
      bytes = serializeManifest(manifest);
    }
  }
  options.onProgress?.({ status: "writing manifest" });
  const stored = formatModelName(name);
  await store.writeManifestBytes(stored, bytes);
  options.onProgress?.({ status: "success" });
  return stored;
}
