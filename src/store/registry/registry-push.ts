// Pushes a stored model to an Ollama registry as `ollama push` does (server/images.go PushModel): every
// layer and then the config blob (blob-upload.ts), then the manifest, PUT last so that the registry
// never names a blob it does not have. Progress in /api/push's words: "retrieving manifest", per blob
// "pushing <12 hex>" with digest, total and completed, "pushing manifest", "success".
import { MANIFEST_MEDIA_TYPE, parseManifest } from "../manifest.ts";
import { formatModelName, parseModelName } from "../model-name.ts";
import { ModelNotFoundError, type ModelStore } from "../model-store.ts";
import type { ProgressHandler } from "../pull-progress.ts";
import { OLLAMA_PART_SIZES, type PartSizes, uploadBlob } from "./blob-upload.ts";
import { defaultRegistryKeyPath, loadRegistryKey, type RegistryKey } from "./registry-key.ts";
import { registryBaseUrl } from "./registry-pull.ts";
import { RegistrySession } from "./registry-session.ts";

export interface PushOptions {
  onProgress?: ProgressHandler;
  signal?: AbortSignal;
  /** Talk to the registry over plain http (Ollama's `insecure`). */
  insecure?: boolean;
  /** The registry for names without a host (default OLLAMA_REGISTRY, else registry.ollama.ai). */
  registry?: string;
  /** The ed25519 key that signs token requests; created there when missing (default LLAMUX_REGISTRY_KEY, else ~/.ollama/id_ed25519). */
  keyPath?: string;
  /** How blobs are cut into parts (Ollama's sizes by default). */
  partSizes?: PartSizes;
}

/** Pushes the stored model `name` to the registry its name names. */
export async function pushToRegistry(store: ModelStore, name: string, options: PushOptions = {}): Promise<void> {
  const progress = options.onProgress ?? (() => {});
  progress({ status: "retrieving manifest" });
  if (/^http:\/\//i.test(name.trim()) && !options.insecure) throw new Error("insecure protocol http");
  const parsed = parseModelName(name);
  const stored = store.find(formatModelName(parsed));
  const bytes = stored && store.manifestBytes(stored.name);
  if (!stored || !bytes) {
    progress({ status: "couldn't retrieve manifest" });
    throw new ModelNotFoundError(name);
  }
  const manifest = parseManifest(new TextDecoder().decode(bytes), stored.name);
  let base = registryBaseUrl(parsed, options.registry);
  if (options.insecure) base = base.replace(/^https:/i, "http:");
  const repository = `${base}/v2/${parsed.namespace}/${parsed.model}`;
  let key: RegistryKey | undefined;
  const session = new RegistrySession(() => (key ??= loadRegistryKey(options.keyPath ?? defaultRegistryKeyPath(), { create: true })), options.signal);

  for (const layer of [...manifest.layers, manifest.config]) {
    await uploadBlob(session, {
      layer, path: store.blobPath(layer.digest), repository, onProgress: progress, partSizes: options.partSizes ?? OLLAMA_PART_SIZES,
    });
  }
  progress({ status: "pushing manifest" });
  const put = await session.expect("PUT", `${repository}/manifests/${parsed.tag}`, { headers: { "Content-Type": MANIFEST_MEDIA_TYPE }, body: () => bytes });
  await put.body?.cancel();
  progress({ status: "success" });
}
