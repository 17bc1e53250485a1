// `llamux pull hf.co/<org>/<repo>[:<quant or file>]`: picks the repository's GGUF for the tag and its
// vision projector, downloads both into the store (resumable, sha256-checked) and writes a manifest
// under `hf.co/<org>/<repo>:<tag>`, as Ollama stores hub models.
import { statSync } from "node:fs";
import { downloadBlob } from "../download.ts";
import { CONFIG_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, type Manifest, type ManifestLayer, layerMediaType } from "../manifest.ts";
import { modelConfigFromHeader } from "../model-config.ts";
import { checkGgufLayer, checkModelLayer } from "../model-layer.ts";
import { type ModelName, formatModelName } from "../model-name.ts";
import type { ModelStore } from "../model-store.ts";
import type { PullOptions } from "../pull.ts";
import { type HubFile, type HubOptions, headHubFile, hubCredentials, hubDownloadUrl, hubError, listHubFiles } from "./hub-api.ts";
import { chooseGgufFile, chooseProjector } from "./quantization.ts";

/** The file's sha256 and size: from the listing, else from the download URL's headers. */
async function describeFile(repo: string, file: HubFile, options: HubOptions): Promise<Required<HubFile>> {
  let { sha256, size } = file;
  if (sha256 === undefined || size === undefined) {
    const head = await headHubFile(repo, file.path, options);
    sha256 ??= head.sha256;
    size ??= head.size;
  }
  if (sha256 === undefined) throw new Error(`The Hugging Face hub reports no sha256 for "${repo}/${file.path}", so it cannot be checked`);
  // the download stops at this size, so a body without end cannot fill the disk
  if (size === undefined || !Number.isSafeInteger(size) || size < 0) throw new Error(`The Hugging Face hub reports no size for "${repo}/${file.path}", so its download cannot be bounded`);
  return { path: file.path, sha256, size };
}

async function downloadFile(store: ModelStore, repo: string, file: Required<HubFile>, mediaType: string, options: PullOptions, hub: HubOptions): Promise<ManifestLayer> {
  const digest = `sha256:${file.sha256}`;
  try {
    await downloadBlob(store, {
      url: hubDownloadUrl(repo, file.path, hub),
      digest,
      size: file.size,
      credentials: hubCredentials(hub),
      label: file.path,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.retries !== undefined ? { retries: options.retries } : {}),
    });
  } catch (error) {
    throw hubError(repo, error, hub);
  }
  return { mediaType, digest, size: statSync(store.blobPath(digest)).size };
}

/** Pulls a hub model; returns the name it is stored under. */
export async function pullFromHub(store: ModelStore, name: ModelName, options: PullOptions = {}): Promise<string> {
  const repo = `${name.namespace}/${name.model}`;
  const hub: HubOptions = { ...options.hub, ...(options.signal ? { signal: options.signal } : {}) };
  options.onProgress?.({ status: "pulling manifest" });
  const files = await listHubFiles(repo, hub);
  const modelFile = await describeFile(repo, chooseGgufFile(repo, files, name.tag), hub);
  const projectorFile = chooseProjector(files);
  const projector = projectorFile && (await describeFile(repo, projectorFile, hub));

  const modelLayer = await downloadFile(store, repo, modelFile, layerMediaType.model, options, hub);
  const projectorLayer = projector && (await downloadFile(store, repo, projector, layerMediaType.projector, options, hub));
  options.onProgress?.({ status: "verifying sha256 digest" });
  const model = await checkModelLayer(store, modelLayer, `"${repo}/${modelFile.path}"`, options.onProgress);
  const projectorHeader = projectorLayer && (await checkGgufLayer(store, projectorLayer, `"${repo}/${projector!.path}"`));

  const config = await store.importBlob(new TextEncoder().encode(JSON.stringify(modelConfigFromHeader(model.header, projectorHeader))));
  const manifest: Manifest = {
    schemaVersion: 2,
    mediaType: MANIFEST_MEDIA_TYPE,
    config: { mediaType: CONFIG_MEDIA_TYPE, ...config },
    layers: [model.layer, ...(projectorLayer ? [projectorLayer] : [])],
  };
  options.onProgress?.({ status: "writing manifest" });
  const stored = formatModelName(name);
  await store.writeManifest(stored, manifest);
  options.onProgress?.({ status: "success" });
  return stored;
}
