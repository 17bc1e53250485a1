// A Modelfile as an /api/create request, as `ollama create` sends one: FROM, a second FROM (a vision
// projector) and ADAPTER files become blobs (paths relative to the Modelfile), copied into the local
// store or uploaded to a server (`BlobImporter`); the text directives become the request's fields.
// createModel (create-model.ts) then builds the model, so the CLI and the server create models one way.
import { createReadStream, existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, isAbsolute, join, resolve } from "node:path";
import { type GgufHeader, ggufString, readGgufHeaderSync } from "./gguf.ts";
import { CreateModelError, type CreateModelRequest } from "./create-model.ts";
import type { ModelStore } from "./model-store.ts";
import type { ModelDefinition } from "./modelfile/index.ts";
import { throttledProgress, type ProgressHandler } from "./pull-progress.ts";

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
    throw new CreateModelError(`Cannot use ${what} "${path}": ${(error as Error).message}`);
  }
}

const isProjector = (header: GgufHeader) => ggufString(header, "general.architecture") === "clip" || ggufString(header, "general.type") === "mmproj";

/** Makes a file available as a blob where the model is created; returns its digest (`sha256:<hex>`). */
export type BlobImporter = (path: string, onProgress: ProgressHandler) => Promise<string>;

/** A file's bytes in 1 MiB chunks, reporting progress under `status` (model files can be many GB). */
export async function* fileChunks(path: string, status: string, onProgress: ProgressHandler): AsyncGenerator<Uint8Array> {
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

/** Copies files into a local store. */
export function storeImporter(store: ModelStore): BlobImporter {
  return async (path, onProgress) => (await store.importBlob(fileChunks(path, `copying file ${basename(path)}`, onProgress))).digest;
}

export async function modelfileRequest(
  importBlob: BlobImporter, definition: ModelDefinition, baseDir: string, onProgress: ProgressHandler = () => {},
): Promise<CreateModelRequest> {
  const importFile = (path: string) => importBlob(path, onProgress);
  const [base, ...extraFroms] = definition.from;
  if (base === undefined) throw new CreateModelError("Cannot create a model without FROM");
  const request: CreateModelRequest = {};
  const basePath = localFile(base, baseDir);
  if (basePath) {
    readHeader(basePath, "FROM file");
    request.files = { [basename(basePath)]: await importFile(basePath) };
  } else request.from = base;

  for (const extra of extraFroms) {
    const path = localFile(extra, baseDir);
    if (!path) throw new CreateModelError(`Cannot use the second FROM "${extra}": only a projector GGUF file can follow the model`);
    if (!isProjector(readHeader(path, "projector"))) {
      throw new CreateModelError(`Cannot use the second FROM "${extra}": it is not a vision projector (mmproj) GGUF`);
    }
    request.files = { ...request.files, [basename(path)]: await importFile(path) };
  }
  for (const adapter of definition.adapters) {
    const path = localFile(adapter, baseDir);
    if (!path) throw new CreateModelError(`Cannot use ADAPTER "${adapter}": no such file`);
    if (ggufString(readHeader(path, "ADAPTER"), "general.type") !== "adapter") {
      throw new CreateModelError(`Cannot use ADAPTER "${adapter}": it is not a LoRA adapter GGUF`);
    }
    request.adapters = { ...request.adapters, [basename(path)]: await importFile(path) };
  }
  if (definition.draft !== undefined) {
    const path = localFile(definition.draft, baseDir);
    if (!path) throw new CreateModelError(`Cannot use DRAFT "${definition.draft}": no such file`);
    if (basePath && path === basePath) throw new CreateModelError(`Cannot use DRAFT "${definition.draft}": it is the FROM model itself`);
    if (isProjector(readHeader(path, "DRAFT"))) throw new CreateModelError(`Cannot use DRAFT "${definition.draft}": it is a vision projector, not a model`);
    request.draftFiles = { [basename(path)]: await importFile(path) };
  }
  if (definition.template !== undefined) request.template = definition.template;
  if (definition.system !== undefined) request.system = definition.system;
  if (Object.keys(definition.parameters).length > 0) request.parameters = definition.parameters;
  if (definition.messages.length > 0) request.messages = definition.messages;
  if (definition.license.length > 0) request.license = definition.license;
  return request;
}
