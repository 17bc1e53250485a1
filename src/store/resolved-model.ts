// What a stored model means for generation: its files and the text layers (template, system prompt,
// parameters, seed messages, license) read out of the blobs its manifest names.
import { existsSync, readFileSync } from "node:fs";
import { layerMediaType, type Manifest, type ManifestLayer } from "./manifest.ts";

/** The config blob Ollama writes (`application/vnd.docker.container.image.v1+json`); every field optional. */
export interface ModelConfig {
  model_format?: string;
  model_family?: string;
  model_families?: string[] | null;
  /** parameter size, e.g. "1.2B" */
  model_type?: string;
  /** quantization, e.g. "Q4_K_M" */
  file_type?: string;
  architecture?: string;
  os?: string;
  [key: string]: unknown;
}

export interface ResolvedModel {
  /** the name as `ollama list` shows it, with the case it was stored under */
  name: string;
  /** first 12 hex characters of the manifest's sha256 */
  id: string;
  /** sha256 hex of the manifest file */
  manifestDigest: string;
  modelPath: string;
  projectorPath?: string;
  adapterPaths: string[];
  /** The draft model for speculative decoding (a draft layer: Modelfile DRAFT). */
  draftPath?: string;
  /** Go text/template (Ollama TEMPLATE) */
  template?: string;
  system?: string;
  /** the params layer: options such as {"temperature": 0.7, "stop": ["<|im_end|>"]} */
  parameters: Record<string, unknown>;
  /** the messages layer (Modelfile MESSAGE lines) */
  messages: Array<{ role: string; content: string }>;
  license?: string;
  config: ModelConfig;
  manifest: Manifest;
  /** sum of the layer and config sizes */
  size: number;
  modifiedAt: Date;
}

export interface ManifestContext {
  name: string;
  manifestDigest: string;
  manifest: Manifest;
  size: number;
  modifiedAt: Date;
}

/**
 * Reads the layers of a manifest. `blobPath` maps digests to files. Throws when the model layer or a
 * blob the manifest names is missing, or a JSON layer does not parse.
 */
export function resolveManifest(context: ManifestContext, blobPath: (digest: string) => string): ResolvedModel {
  const { manifest, name } = context;
  const fail = (reason: string): never => {
    throw new Error(`Cannot use model "${name}": ${reason}`);
  };
  const fileOf = (layer: ManifestLayer) => {
    const path = blobPath(layer.digest);
    if (!existsSync(path)) fail(`blob ${layer.digest} is missing from the store (pull or create the model again)`);
    return path;
  };
  const textOf = (layer: ManifestLayer) => readFileSync(fileOf(layer), "utf8");
  const jsonOf = (layer: ManifestLayer, what: string): unknown => {
    try {
      return JSON.parse(textOf(layer));
    } catch (error) {
      return fail(`its ${what} layer is not JSON (${(error as Error).message})`);
    }
  };
  const ofType = (type: string) => manifest.layers.filter((layer) => layer.mediaType === type);

  const model = ofType(layerMediaType.model)[0] ?? fail("its manifest has no model layer");
  const projector = ofType(layerMediaType.projector)[0];
  const template = ofType(layerMediaType.template)[0] ?? ofType(layerMediaType.prompt)[0];
  const system = ofType(layerMediaType.system)[0];
  const params = ofType(layerMediaType.params)[0];
  const messages = ofType(layerMediaType.messages)[0];
  const licenses = ofType(layerMediaType.license);
  const draft = ofType(layerMediaType.draft)[0];

  const parameters = params ? jsonOf(params, "params") : {};
  if (typeof parameters !== "object" || parameters === null || Array.isArray(parameters)) fail("its params layer is not a JSON object");
  const messageList = messages ? jsonOf(messages, "messages") : [];
  if (!Array.isArray(messageList)) fail("its messages layer is not a JSON array");

  let config: ModelConfig = {};
  if (existsSync(blobPath(manifest.config.digest))) {
    try {
      config = JSON.parse(readFileSync(blobPath(manifest.config.digest), "utf8")) as ModelConfig;
    } catch {
      config = {}; // the config only describes the model; generation does not need it
    }
  }

  return {
    name,
    id: context.manifestDigest.slice(0, 12),
    manifestDigest: context.manifestDigest,
    modelPath: fileOf(model),
    ...(projector ? { projectorPath: fileOf(projector) } : {}),
    adapterPaths: ofType(layerMediaType.adapter).map(fileOf),
    ...(draft ? { draftPath: fileOf(draft) } : {}),
    ...(template ? { template: textOf(template) } : {}),
    ...(system ? { system: textOf(system) } : {}),
    parameters: parameters as Record<string, unknown>,
    messages: messageList as ResolvedModel["messages"],
    ...(licenses.length ? { license: licenses.map(textOf).join("\n") } : {}),
    config,
    manifest,
    size: context.size,
    modifiedAt: context.modifiedAt,
  };
}
