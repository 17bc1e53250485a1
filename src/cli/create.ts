// `llamux create NAME -f Modelfile [-q TYPE]`: builds a stored model from a Modelfile. As `ollama
// create` does, the files the Modelfile names are put into the store first (with a progress bar),
// then the model is created from them through the same path as /api/create.
import { createReadStream, existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { checkQuantization, createModel, type CreateModelRequest } from "../store/create-model.ts";
import { ggufString, readGgufHeaderSync } from "../store/gguf.ts";
import type { ModelStore } from "../store/model-store.ts";
import { modelDefinition, parseModelfile } from "../store/modelfile/index.ts";
import { throttledProgress, type ProgressHandler } from "../store/pull-progress.ts";
import { openStore } from "./model-store-access.ts";
import { terminalProgress } from "./terminal/progress-bar.ts";
import { UsageError } from "./usage-error.ts";

export const createHelp = `Usage: llamux create NAME [-f Modelfile] [-q TYPE]

Creates the model NAME in the store from a Modelfile:
  FROM ./model.gguf | MODEL     the weights: a GGUF file (relative to the Modelfile) or a stored model
  FROM ./mmproj.gguf            a second FROM naming a vision projector
  ADAPTER ./lora.gguf           a LoRA adapter applied on top
  TEMPLATE """..."""            the prompt template (Go text/template, as Ollama's)
  SYSTEM """..."""              the default system prompt
  PARAMETER NAME VALUE          a default option (temperature, top_k, stop, num_ctx, ...)
  MESSAGE user|assistant TEXT   a seed conversation
  LICENSE """..."""             the license text

Options:
  -f, --file PATH        the Modelfile (default ./Modelfile)
  -q, --quantize TYPE    quantize F16/F32 weights with llama.cpp (Q4_0, Q4_K_M, Q5_K_M, Q6_K, Q8_0)
  -h, --help             show this help`;

/** A FROM or ADAPTER value as a file path, `~` expanded and relative to the Modelfile; undefined when no such file exists. */
function localFile(value: string, baseDir: string): string | undefined {
  const expanded = value.startsWith("~/") ? join(homedir(), value.slice(2)) : value;
  const path = isAbsolute(expanded) ? expanded : resolve(baseDir, expanded);
  return existsSync(path) && statSync(path).isFile() ? path : undefined;
}

/** Copies a file into the store as a blob, with progress; returns its digest. */
async function importFile(store: ModelStore, path: string, onProgress: ProgressHandler): Promise<string> {
  const status = `copying file ${basename(path)}`;
  const total = statSync(path).size;
  const report = throttledProgress(onProgress);
  let completed = 0;
  async function* chunks(): AsyncGenerator<Uint8Array> {
    report({ status, total, completed });
    for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
      completed += (chunk as Buffer).byteLength;
      report({ status, total, completed });
      yield chunk as Buffer;
    }
  }
  return (await store.importBlob(chunks())).digest;
}

function ggufType(path: string, what: string): string | undefined {
  try {
    return ggufString(readGgufHeaderSync(path, { maxArrayLength: 0 }), "general.type");
  } catch (error) {
    throw new Error(`Cannot use ${what} "${path}": ${(error as Error).message}`);
  }
}

/** The Modelfile as /api/create's request, its files already in the store. */
async function createRequest(store: ModelStore, text: string, baseDir: string, onProgress: ProgressHandler): Promise<CreateModelRequest> {
  const modelfile = parseModelfile(text);
  for (const warning of modelfile.warnings) console.error(`warning: ${warning}`);
  const definition = modelDefinition(modelfile);
  for (const { instruction, line } of definition.unsupported) console.error(`warning: ${instruction} (line ${line}) is not supported and is ignored`);
  const request: CreateModelRequest = {};
  const files: Record<string, string> = {};
  definition.from.forEach((from, i) => {
    if (i > 0 && !localFile(from, baseDir)) throw new Error(`Cannot use the second FROM "${from}": only a projector GGUF file can follow the model`);
  });
  for (const [i, from] of definition.from.entries()) {
    const path = localFile(from, baseDir);
    if (!path) request.from = from;
    else {
      ggufType(path, "FROM file");
      files[`${i}-${basename(path)}`] = await importFile(store, path, onProgress);
    }
  }
  if (Object.keys(files).length) request.files = files;
  const adapters: Record<string, string> = {};
  for (const adapter of definition.adapters) {
    const path = localFile(adapter, baseDir);
    if (!path) throw new Error(`Cannot use ADAPTER "${adapter}": no such file`);
    if (ggufType(path, "ADAPTER") !== "adapter") throw new Error(`Cannot use ADAPTER "${adapter}": it is not a LoRA adapter GGUF`);
    adapters[basename(path)] = await importFile(store, path, onProgress);
  }
  if (Object.keys(adapters).length) request.adapters = adapters;
  if (definition.template !== undefined) request.template = definition.template;
  if (definition.system !== undefined) request.system = definition.system;
  if (Object.keys(definition.parameters).length) request.parameters = definition.parameters;
  if (definition.messages.length) request.messages = definition.messages;
  if (definition.license.length) request.license = definition.license;
  return request;
}

export async function createCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { file: { type: "string", short: "f" }, quantize: { type: "string", short: "q" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    console.log(createHelp);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError("create needs one model name");
  checkQuantization(values.quantize);
  const file = resolve(values.file ?? "Modelfile");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`Cannot read Modelfile "${file}": ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`);
  }
  const store = openStore();
  const progress = terminalProgress();
  try {
    progress.onProgress({ status: "gathering model components" });
    const request = await createRequest(store, text, dirname(file), progress.onProgress);
    if (values.quantize) request.quantize = values.quantize;
    await createModel(store, positionals[0]!, request, progress.onProgress);
  } finally {
    progress.finish();
  }
  return 0;
}
