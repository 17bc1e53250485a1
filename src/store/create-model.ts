// Builds a stored model from a Modelfile definition, as `ollama create` does: FROM a GGUF file (a
// path relative to the Modelfile) or an existing model, a second FROM naming a projector, ADAPTER
// files, and the text layers (template, system, params, messages, license). `quantize` re-quantizes
// the weights; an Ollama-named LFM2 file is repaired on the way in.
import { createReadStream, existsSync, statSync } from "node:fs";
import { rm } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { tempPathIn } from "./atomic-file.ts";
import { type GgufHeader, ggufNumber, ggufString, readGgufHeaderSync } from "./gguf.ts";
import { CONFIG_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, type Manifest, type ManifestLayer, layerMediaType } from "./manifest.ts";
import { fileTypeName, modelConfigFromHeader } from "./model-config.ts";
import { checkModelLayer } from "./model-layer.ts";
import { formatModelName, parseModelName } from "./model-name.ts";
import { ModelNotFoundError, type ModelStore } from "./model-store.ts";
import type { ModelDefinition } from "./modelfile/index.ts";
import { throttledProgress, type ProgressHandler } from "./pull-progress.ts";

/** Re-quantizes `input` into `output` (a GGUF of type `type`), reporting progress. */
export type Quantizer = (input: string, output: string, type: string, onProgress?: ProgressHandler) => Promise<void>;

export interface CreateOptions {
  /** where relative FROM and ADAPTER paths start (the Modelfile's directory) */
  baseDir: string;
  /** a quantization type such as Q4_0 or Q4_K_M */
  quantize?: string;
  quantizer?: Quantizer;
  onProgress?: ProgressHandler;
}

const TEXT_LAYER_TYPES = [layerMediaType.template, layerMediaType.prompt, layerMediaType.system, layerMediaType.params, layerMediaType.messages, layerMediaType.license];

/** A FROM or ADAPTER value as a file path, `~` expanded and relative to the Modelfile; undefined when no such file exists. */
function localFile(value: string, baseDir: string): string | undefined {
  const expanded = value.startsWith("~/") ? join(homedir(), value.slice(2)) : value;
  const path = isAbsolute(expanded) ? expanded : resolve(baseDir, expanded);
  return existsSync(path) && statSync(path).isFile() ? path : undefined;
}

function readHeader(path: string, what: string): GgufHeader {
  try {
    return readGgufHeaderSync(path, { maxArrayLength: 0 });
  } catch (error) {
    throw new Error(`Cannot use ${what} "${path}": ${(error as Error).message}`, { cause: error });
  }
}

/** A file's bytes for importBlob, reporting how much has been copied. */
async function* withCopyProgress(path: string, status: string, onProgress: ProgressHandler): AsyncGenerator<Uint8Array> {
  const total = statSync(path).size;
  const report = throttledProgress(onProgress);
  let completed = 0;
  report({ status, total, completed });
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    completed += (chunk as Buffer).byteLength;
    report({ status, total, completed });
    yield chunk as Buffer;
  }
}

const isProjector = (header: GgufHeader) => ggufString(header, "general.architecture") === "clip" || ggufString(header, "general.type") === "mmproj";

export async function createModel(store: ModelStore, name: string, definition: ModelDefinition, options: CreateOptions): Promise<string> {
  const stored = formatModelName(parseModelName(name));
  const progress = options.onProgress ?? (() => {});
  const [base, ...extraFroms] = definition.from;
  if (base === undefined) throw new Error("Cannot create a model without FROM");
  progress({ status: "gathering model components" });

  let modelLayer: ManifestLayer;
  let inherited: ManifestLayer[] = [];
  let baseParameters: Record<string, unknown> = {};
  const basePath = localFile(base, options.baseDir);
  if (basePath) {
    readHeader(basePath, "FROM file");
    const blob = await store.importBlob(withCopyProgress(basePath, "copying model file", progress));
    modelLayer = { mediaType: layerMediaType.model, ...blob };
  } else {
    const resolved = store.resolve(base);
    if (!resolved) throw new ModelNotFoundError(base);
    const layers = resolved.manifest.layers;
    modelLayer = layers.find((layer) => layer.mediaType === layerMediaType.model)!;
    // the base's other layers carry over unless the Modelfile replaces them
    inherited = layers.filter((layer) => layer !== modelLayer);
    baseParameters = resolved.parameters;
    progress({ status: `using existing layer ${modelLayer.digest}` });
  }

  if (options.quantize) modelLayer = await quantizeLayer(store, modelLayer, options.quantize, options);
  const checked = await checkModelLayer(store, modelLayer, `FROM "${base}"`, progress);
  modelLayer = checked.layer;
  if (checked.repairs.length) progress({ status: `repaired for llama.cpp: ${checked.repairs.join("; ")}` });

  const layers: ManifestLayer[] = [modelLayer];
  let projectorHeader: GgufHeader | undefined;
  for (const extra of extraFroms) {
    const path = localFile(extra, options.baseDir);
    if (!path) throw new Error(`Cannot use the second FROM "${extra}": only a projector GGUF file can follow the model`);
    const header = readHeader(path, "projector");
    if (!isProjector(header)) throw new Error(`Cannot use the second FROM "${extra}": it is not a vision projector (mmproj) GGUF`);
    projectorHeader = header;
    layers.push({ mediaType: layerMediaType.projector, ...(await store.importBlob(path)) });
  }
  if (!projectorHeader) layers.push(...inherited.filter((layer) => layer.mediaType === layerMediaType.projector));

  for (const adapter of definition.adapters) {
    const path = localFile(adapter, options.baseDir);
    if (!path) throw new Error(`Cannot use ADAPTER "${adapter}": no such file`);
    const header = readHeader(path, "ADAPTER");
    if (ggufString(header, "general.type") !== "adapter") throw new Error(`Cannot use ADAPTER "${adapter}": it is not a LoRA adapter GGUF`);
    layers.push({ mediaType: layerMediaType.adapter, ...(await store.importBlob(path)) });
  }
  if (definition.adapters.length === 0) layers.push(...inherited.filter((layer) => layer.mediaType === layerMediaType.adapter));

  const textLayer = async (mediaType: string, text: string) => {
    const blob = await store.importBlob(new TextEncoder().encode(text));
    progress({ status: `creating new layer ${blob.digest}` });
    layers.push({ mediaType, ...blob });
  };
  const keep = (...types: string[]) => layers.push(...inherited.filter((layer) => types.includes(layer.mediaType)));
  if (definition.template !== undefined) await textLayer(layerMediaType.template, definition.template);
  else keep(layerMediaType.template, layerMediaType.prompt);
  if (definition.system !== undefined) await textLayer(layerMediaType.system, definition.system);
  else keep(layerMediaType.system);
  const parameters = { ...baseParameters, ...definition.parameters };
  if (Object.keys(parameters).length > 0) await textLayer(layerMediaType.params, JSON.stringify(parameters));
  if (definition.messages.length > 0) await textLayer(layerMediaType.messages, JSON.stringify(definition.messages));
  else keep(layerMediaType.messages);
  if (definition.license.length > 0) for (const license of definition.license) await textLayer(layerMediaType.license, license);
  else keep(layerMediaType.license);
  const unknownInherited = inherited.filter((layer) => ![...TEXT_LAYER_TYPES, layerMediaType.projector, layerMediaType.adapter].includes(layer.mediaType as never));
  layers.push(...unknownInherited);

  const config = await store.importBlob(new TextEncoder().encode(JSON.stringify(modelConfigFromHeader(checked.header, projectorHeader))));
  const manifest: Manifest = { schemaVersion: 2, mediaType: MANIFEST_MEDIA_TYPE, config: { mediaType: CONFIG_MEDIA_TYPE, ...config }, layers };
  progress({ status: "writing manifest" });
  await store.writeManifest(stored, manifest);
  progress({ status: "success" });
  return stored;
}

async function quantizeLayer(store: ModelStore, layer: ManifestLayer, type: string, options: CreateOptions): Promise<ManifestLayer> {
  if (!options.quantizer) throw new Error("Cannot quantize: no quantizer given");
  const from = fileTypeName(ggufNumber(readHeader(store.blobPath(layer.digest), "model"), "general.file_type"));
  const temp = tempPathIn(store.blobsDir);
  try {
    options.onProgress?.({ status: `quantizing ${from ?? "the"} model to ${type}` });
    await options.quantizer(store.blobPath(layer.digest), temp, type, options.onProgress);
    const blob = await store.importBlob(temp, { move: true });
    return { mediaType: layerMediaType.model, ...blob };
  } finally {
    await rm(temp, { force: true });
  }
}
