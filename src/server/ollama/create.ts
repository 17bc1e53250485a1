// POST /api/create: a model in the store from a stored model or uploaded GGUF blobs, with a template,
// system prompt, parameters, seed messages and license, in Ollama's JSON form or (older clients) as
// Modelfile text. Progress lines as /api/pull's.
import { existsSync, statSync } from "node:fs";
import type { Context } from "hono";
import { z } from "zod";
import { checkGgufFile, checkQuantization, createModel, CreateModelError, type CreateModelRequest } from "../../store/create-model.ts";
import { tryParseModelName } from "../../store/model-name.ts";
import { ModelNotFoundError } from "../../store/model-store.ts";
import { modelDefinition, ModelfileSyntaxError, parseModelfile } from "../../store/modelfile/index.ts";
import { ApiError, badRequest, notFound } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";
import { readJsonBody, validate } from "../validation.ts";
import { storeOf } from "./copy-delete.ts";
import { respondProgress } from "./progress.ts";

const createSchema = z.object({
  model: z.string().optional(),
  name: z.string().optional().describe("deprecated: model"),
  from: z.string().nullable().optional().describe("a stored model (or a GGUF path on the server) to start from"),
  files: z.record(z.string(), z.string()).nullable().optional().describe("file name → sha256 digest of an uploaded blob"),
  adapters: z.record(z.string(), z.string()).nullable().optional(),
  draft_files: z.record(z.string(), z.string()).nullable().optional().describe("file name → sha256 digest of an uploaded draft model (speculative decoding)"),
  template: z.string().nullable().optional(),
  system: z.string().nullable().optional(),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  messages: z.array(z.object({ role: z.string(), content: z.string().default("") })).nullable().optional(),
  license: z.union([z.string(), z.array(z.string())]).nullable().optional(),
  quantize: z.string().nullable().optional(),
  quantization: z.string().nullable().optional(),
  modelfile: z.string().nullable().optional().describe("older clients: the Modelfile as text"),
  stream: z.boolean().nullable().optional(),
});

const BLOB_REFERENCE = /^@?sha256[:-]([0-9a-fA-F]{64})$/;

type CreateBody = z.infer<typeof createSchema>;

/** The request in the store's terms; Modelfile text fills in what the JSON fields leave unset. */
function createRequest(body: CreateBody): CreateModelRequest {
  const request: CreateModelRequest = {};
  if (body.modelfile) {
    let definition;
    try {
      definition = modelDefinition(parseModelfile(body.modelfile));
    } catch (error) {
      if (error instanceof ModelfileSyntaxError) throw badRequest(error.message, "modelfile");
      throw error;
    }
    if (definition.unsupported.length) throw badRequest(`${definition.unsupported[0]!.instruction} is not supported (line ${definition.unsupported[0]!.line})`, "modelfile");
    // FROM names a model, a file on the server, or (older clients, after uploading) `@sha256:<hex>`
    const files: Record<string, string> = {};
    for (const [index, from] of definition.from.entries()) {
      const blob = BLOB_REFERENCE.exec(from);
      if (blob) files[index === 0 ? "model.gguf" : `projector-${index}.gguf`] = `sha256:${blob[1]}`;
      else if (index === 0) request.from = from;
      else throw badRequest(`FROM ${from}: a projector must be uploaded as a blob first`, "modelfile");
    }
    if (Object.keys(files).length) request.files = files;
    for (const adapter of definition.adapters) {
      const blob = BLOB_REFERENCE.exec(adapter);
      if (!blob) throw badRequest(`ADAPTER ${adapter}: an adapter must be uploaded as a blob first (ADAPTER @sha256:<digest>)`, "modelfile");
      request.adapters = { ...request.adapters, [`adapter-${Object.keys(request.adapters ?? {}).length}.gguf`]: `sha256:${blob[1]}` };
    }
    if (definition.draft !== undefined) {
      const blob = BLOB_REFERENCE.exec(definition.draft);
      if (!blob) throw badRequest(`DRAFT ${definition.draft}: the draft model must be uploaded as a blob first (@sha256:…)`, "modelfile");
      request.draftFiles = { "draft.gguf": `sha256:${blob[1]}` };
    }
    if (definition.template !== undefined) request.template = definition.template;
    if (definition.system !== undefined) request.system = definition.system;
    if (Object.keys(definition.parameters).length) request.parameters = definition.parameters;
    if (definition.messages.length) request.messages = definition.messages;
    if (definition.license.length) request.license = definition.license;
  }
  if (body.from) request.from = body.from;
  if (body.files) request.files = body.files;
  if (body.adapters) request.adapters = body.adapters;
  if (body.draft_files) request.draftFiles = body.draft_files;
  if (body.template != null) request.template = body.template;
  if (body.system != null) request.system = body.system;
  if (body.parameters) request.parameters = body.parameters;
  if (body.messages) request.messages = body.messages;
  if (body.license != null) request.license = body.license;
  return request;
}

function asApiError(error: unknown): unknown {
  if (error instanceof CreateModelError) return badRequest(error.message);
  if (error instanceof ModelNotFoundError) return notFound(error.message);
  return error instanceof ApiError ? error : new ApiError(500, (error as Error).message, { cause: error });
}

export function create(deps: ServerDeps) {
  return async function createHandler(c: Context) {
    const body = validate(createSchema, await readJsonBody(c));
    const name = body.model || body.name || "";
    if (!name) throw badRequest("model is required", "model");
    if (!tryParseModelName(name)) throw badRequest("invalid model name", "model");
    const request = createRequest(body);
    const quantize = body.quantize || body.quantization;
    if (quantize) {
      try {
        checkQuantization(quantize);
      } catch (error) {
        throw badRequest((error as Error).message, "quantize");
      }
      request.quantize = quantize;
    }
    const store = storeOf(deps);
    // what can be told before streaming gets a status code of its own
    if (!request.from && !Object.keys(request.files ?? {}).length) throw badRequest("neither 'from' or 'files' was specified");
    if (request.from && !store.find(request.from)) {
      if (!existsSync(request.from) || !statSync(request.from).isFile()) throw notFound(`model '${request.from}' not found`);
      // A path on the server: refused before anything is copied unless it is a GGUF file.
      try {
        checkGgufFile(request.from);
      } catch (error) {
        throw badRequest((error as Error).message, "from");
      }
    }
    for (const [file, digest] of Object.entries({ ...request.files, ...request.adapters, ...request.draftFiles })) {
      if (!BLOB_REFERENCE.test(digest)) throw badRequest(`invalid digest "${digest}" for "${file}"`, "files");
      if (!store.hasBlob(digest)) throw badRequest(`blob ${digest} for "${file}" is missing: upload it first (POST /api/blobs/${digest})`, "files");
    }
    return respondProgress(c, body.stream !== false, async (onProgress, signal) => {
      await createModel(store, name, request, onProgress, signal);
    }, asApiError);
  };
}
