// Creates a model in the store as Ollama's /api/create does: layers from a base (`from`: a stored model
// or a GGUF file, or `files`: blobs already uploaded), adapters, then the text layers (template,
// system, parameters, messages, license) that replace the base's, a config blob, and the manifest.
import { existsSync, readFileSync, statSync } from "node:fs";
import { rm } from "node:fs/promises";
import type { QuantizationType } from "../../ffi/quantize.ts";
import { tempPathIn } from "./atomic-file.ts";
import { type GgufHeader, GgufReadError, ggufNumber, ggufString, readGgufHeaderSync } from "./gguf.ts";
import { LoraAdapterFileError, readLoraAdapter } from "./lora-adapter-file.ts";
import { CONFIG_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, layerMediaType, type Manifest, type ManifestLayer } from "./manifest.ts";
import { fileTypeName, modelConfigFromHeader } from "./model-config.ts";
import { checkModelLayer, discardBlob } from "./model-layer.ts";
import { parseModelName } from "./model-name.ts";
import { ModelNotFoundError, type ModelStore } from "./model-store.ts";
import { parameterProblems } from "./modelfile/parameters.ts";
import type { ProgressHandler } from "./pull-progress.ts";
import { quantizationType, quantizeInChild, supportedQuantizations } from "./quantize-process.ts";

export interface CreateModelRequest {
  /** A stored model's name, or a GGUF file on this machine. */
  from?: string;
  /** File name → `sha256:<hex>` of blobs already in the store (uploaded through /api/blobs). */
  files?: Record<string, string>;
  adapters?: Record<string, string>;
  /** Ollama's draft_files: file name → digest of a draft model GGUF (speculative decoding); replaces the base's. */
  draftFiles?: Record<string, string>;
  template?: string;
  system?: string;
  /** Merged over the base model's parameters. */
  parameters?: Record<string, unknown>;
  messages?: Array<{ role: string; content: string }>;
  license?: string | string[];
  /** Quantize an F16/F32/BF16 model file to this type (`q4_K_M`, `q8_0`, ...). */
  quantize?: string;
}

/** A request that cannot be created as asked (the route answers 400). */
export class CreateModelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CreateModelError";
  }
}

const textLayerTypes = new Set<string>([
  layerMediaType.template, layerMediaType.prompt, layerMediaType.system, layerMediaType.params, layerMediaType.messages, layerMediaType.license,
]);

function isProjector(header: GgufHeader): boolean {
  return ggufString(header, "general.architecture") === "clip";
}

async function textLayer(store: ModelStore, mediaType: string, text: string, onProgress: ProgressHandler): Promise<ManifestLayer> {
  const blob = await store.importBlob(new TextEncoder().encode(text));
  onProgress({ status: `using layer ${blob.digest}` });
  return { mediaType, digest: blob.digest, size: blob.size };
}

/** A GGUF blob as a model or projector layer (LFM2 files published for Ollama are repaired, as a pull does). */
async function ggufLayer(store: ModelStore, digest: string, label: string, onProgress: ProgressHandler): Promise<{ layer: ManifestLayer; header: GgufHeader }> {
  const path = store.blobPath(digest);
  if (!existsSync(path)) throw new CreateModelError(`blob ${digest} for "${label}" is not in the store; upload it first (POST /api/blobs/${digest})`);
  let header: GgufHeader;
  try {
    header = readGgufHeaderSync(path, { maxArrayLength: 0 });
  } catch (error) {
    // The reason only: the reader's message names the blob, whose name is the content's digest.
    throw new CreateModelError(`"${label}" is not a GGUF file: ${error instanceof GgufReadError ? error.reason : "cannot read it"}`);
  }
  const base = { digest: `sha256:${digest.replace(/^sha256[:-]/, "")}`, size: statSync(path).size };
  if (isProjector(header)) return { layer: { mediaType: layerMediaType.projector, ...base }, header };
  onProgress({ status: "parsing GGUF" });
  const checked = await checkModelLayer(store, { mediaType: layerMediaType.model, ...base }, label, onProgress);
  return { layer: checked.layer, header: checked.header };
}

/** The base's layers: a stored model's, or a GGUF file imported into the store. */
async function baseLayers(store: ModelStore, from: string, onProgress: ProgressHandler): Promise<{ layers: ManifestLayer[]; config?: Manifest["config"] }> {
  const stored = store.find(from);
  if (stored) {
    for (const layer of stored.manifest.layers) onProgress({ status: `using existing layer ${layer.digest}` });
    return { layers: [...stored.manifest.layers], config: stored.manifest.config };
  }
  if (existsSync(from) && statSync(from).isFile()) {
    // Any file the server can read may be named: nothing is copied, and nothing about it is told,
    // unless it is a GGUF file whose whole header reads.
    checkGgufFile(from);
    onProgress({ status: `copying file ${from}` });
    const blob = await store.importBlob(from);
    const { layer } = await ggufLayer(store, blob.digest, from, onProgress);
    return { layers: [layer] };
  }
  throw new ModelNotFoundError(from);
}

/** Throws CreateModelError unless `path` starts like a GGUF file and its header reads whole. */
export function checkGgufFile(path: string): GgufHeader {
  try {
    return readGgufHeaderSync(path, { maxArrayLength: 0 });
  } catch (error) {
    const reason = error instanceof GgufReadError && error.reason !== "bad magic" ? `: ${error.reason}` : "";
    throw new CreateModelError(`"${path}" is not a GGUF model file${reason}`);
  }
}

/** An ADAPTER blob: a GGUF LoRA adapter for the model's architecture, or CreateModelError. */
function checkAdapter(path: string, file: string, modelArchitecture: string | undefined): void {
  try {
    readLoraAdapter(path, modelArchitecture);
  } catch (error) {
    if (error instanceof LoraAdapterFileError) throw new CreateModelError(`adapter "${file}" ${error.reason}`);
    throw error;
  }
}

/** The store, except that the digest of every blob imported through it is added to `imported`. */
function recordingImports(store: ModelStore, imported: string[]): ModelStore {
  const recording = Object.create(store) as ModelStore;
  recording.importBlob = async (source, options) => {
    const blob = await store.importBlob(source, options);
    imported.push(blob.digest);
    return blob;
  };
  return recording;
}

function parametersOf(store: ModelStore, layers: ManifestLayer[]): Record<string, unknown> {
  const params = layers.find((layer) => layer.mediaType === layerMediaType.params);
  if (!params) return {};
  try {
    return JSON.parse(readFileSync(store.blobPath(params.digest), "utf8")) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** The quantization type of a request, checked: undefined for none, else a type llama.cpp's quantizer writes. */
export function checkQuantization(name: string | undefined): QuantizationType | undefined {
  if (!name) return undefined;
  const type = quantizationType(name);
  if (!type || type === "F16") throw new CreateModelError(`unsupported quantization type ${name}: use one of ${supportedQuantizations.join(", ")}`);
  return type;
}

/** The model layer quantized into a new blob (from F16, F32 or BF16 only, as Ollama allows). */
async function quantizeLayer(store: ModelStore, model: ManifestLayer, name: string, onProgress: ProgressHandler, signal?: AbortSignal): Promise<ManifestLayer> {
  const type = checkQuantization(name)!;
  const path = store.blobPath(model.digest);
  const from = fileTypeName(ggufNumber(readGgufHeaderSync(path, { maxArrayLength: 0 }), "general.file_type")) ?? "unknown";
  if (!["F16", "F32", "BF16"].includes(from)) throw new CreateModelError(`quantization is only supported for F16 and F32 models (this one is ${from})`);
  onProgress({ status: `quantizing ${from} model to ${type}` });
  const temp = tempPathIn(store.blobsDir);
  try {
    await quantizeInChild(path, temp, type, signal, onProgress);
    const blob = await store.importBlob(temp, { move: true });
    onProgress({ status: `creating new layer ${blob.digest}` });
    return { mediaType: layerMediaType.model, digest: blob.digest, size: blob.size };
  } finally {
    await rm(temp, { force: true });
  }
}

/**
 * Creates (or replaces) `name`; progress goes to `onProgress` in /api/create's shape, ending with "success".
 * A create that fails (or is cancelled) removes the blobs it wrote that no manifest references.
 */
export async function createModel(
  store: ModelStore, name: string, request: CreateModelRequest, onProgress: ProgressHandler = () => {}, signal?: AbortSignal,
): Promise<void> {
  const imported: string[] = [];
  try {
    await createModelRecording(recordingImports(store, imported), name, request, onProgress, signal);
  } catch (error) {
    for (const digest of imported) await discardBlob(store, digest);
    throw error;
  }
}

async function createModelRecording(
  store: ModelStore, name: string, request: CreateModelRequest, onProgress: ProgressHandler, signal?: AbortSignal,
): Promise<void> {
  try {
    parseModelName(name);
  } catch (error) {
    throw new CreateModelError((error as Error).message);
  }
  const files = Object.entries(request.files ?? {});
  if (!request.from && files.length === 0) throw new CreateModelError("neither 'from' or 'files' was specified");
  if (request.parameters) {
    const problems = parameterProblems(request.parameters);
    if (problems.length) throw new CreateModelError(problems.join("; "));
  }

  let layers: ManifestLayer[] = [];
  let config: Manifest["config"] | undefined;
  if (request.from) ({ layers, config } = await baseLayers(store, request.from, onProgress));
  for (const [file, digest] of files) {
    const { layer } = await ggufLayer(store, digest, file, onProgress);
    // uploaded files replace the base's file of the same kind
    if (layer.mediaType === layerMediaType.model) config = undefined;
    layers = [...layers.filter((l) => l.mediaType !== layer.mediaType), layer];
  }
  const modelLayer = layers.find((layer) => layer.mediaType === layerMediaType.model);
  const modelArchitecture = modelLayer && ggufString(readGgufHeaderSync(store.blobPath(modelLayer.digest), { maxArrayLength: 0 }), "general.architecture");
  for (const [file, digest] of Object.entries(request.adapters ?? {})) {
    const path = store.blobPath(digest);
    if (!existsSync(path)) throw new CreateModelError(`blob ${digest} for adapter "${file}" is not in the store; upload it first`);
    checkAdapter(path, file, modelArchitecture);
    layers.push({ mediaType: layerMediaType.adapter, digest: `sha256:${digest.replace(/^sha256[:-]/, "")}`, size: statSync(path).size });
  }
  for (const [file, digest] of Object.entries(request.draftFiles ?? {})) {
    const path = store.blobPath(digest);
    if (!existsSync(path)) throw new CreateModelError(`blob ${digest} for draft "${file}" is not in the store; upload it first`);
    try {
      if (isProjector(readGgufHeaderSync(path, { maxArrayLength: 0 }))) throw new CreateModelError(`draft "${file}" is a vision projector, not a model`);
    } catch (error) {
      if (error instanceof CreateModelError) throw error;
      throw new CreateModelError(`draft "${file}" is not a GGUF file: ${(error as Error).message}`);
    }
    const layer = { mediaType: layerMediaType.draft, digest: `sha256:${digest.replace(/^sha256[:-]/, "")}`, size: statSync(path).size };
    layers = [...layers.filter((l) => l.mediaType !== layerMediaType.draft), layer];
  }
  let model = layers.find((layer) => layer.mediaType === layerMediaType.model);
  if (!model) throw new CreateModelError("no model layer: 'from' or 'files' must name a GGUF model");
  const draftLayer = layers.find((layer) => layer.mediaType === layerMediaType.draft);
  if (draftLayer?.digest === model.digest) throw new CreateModelError("the draft model must not be the model itself (DRAFT names the same file as FROM)");
  if (request.quantize) {
    const quantized = await quantizeLayer(store, model, request.quantize, onProgress, signal);
    layers = layers.map((layer) => (layer === model ? quantized : layer));
    model = quantized;
    config = undefined;
  }

  const replace = async (types: string[], mediaType: string, text: string | undefined) => {
    if (text === undefined) return;
    layers = layers.filter((layer) => !types.includes(layer.mediaType));
    layers.push(await textLayer(store, mediaType, text, onProgress));
  };
  await replace([layerMediaType.template, layerMediaType.prompt], layerMediaType.template, request.template);
  await replace([layerMediaType.system], layerMediaType.system, request.system);
  if (request.parameters && Object.keys(request.parameters).length) {
    await replace([layerMediaType.params], layerMediaType.params, JSON.stringify({ ...parametersOf(store, layers), ...request.parameters }));
  }
  if (request.messages?.length) await replace([layerMediaType.messages], layerMediaType.messages, JSON.stringify(request.messages));
  const licenses = request.license === undefined ? [] : Array.isArray(request.license) ? request.license : [request.license];
  if (licenses.length) {
    layers = layers.filter((layer) => layer.mediaType !== layerMediaType.license);
    for (const license of licenses) layers.push(await textLayer(store, layerMediaType.license, license, onProgress));
  }
  // the model's files first, then its text layers, as Ollama orders them
  layers = [...layers.filter((l) => !textLayerTypes.has(l.mediaType)), ...layers.filter((l) => textLayerTypes.has(l.mediaType))];

  if (!config) {
    const header = readGgufHeaderSync(store.blobPath(model.digest), { maxArrayLength: 0 });
    const projector = layers.find((layer) => layer.mediaType === layerMediaType.projector);
    const projectorHeader = projector ? readGgufHeaderSync(store.blobPath(projector.digest), { maxArrayLength: 0 }) : undefined;
    const blob = await store.importBlob(new TextEncoder().encode(JSON.stringify(modelConfigFromHeader(header, projectorHeader))));
    config = { mediaType: CONFIG_MEDIA_TYPE, digest: blob.digest, size: blob.size };
  }
  onProgress({ status: "writing manifest" });
  await store.writeManifest(name, { schemaVersion: 2, mediaType: MANIFEST_MEDIA_TYPE, config, layers });
  onProgress({ status: "success" });
}
