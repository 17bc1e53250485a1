// `llamux create NAME -f Modelfile [-q TYPE]`: builds a stored model from a Modelfile.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { checkQuantization, createModel } from "../store/create-model.ts";
import { modelDefinition, parseModelfile } from "../store/modelfile/index.ts";
import { modelfileRequest, storeImporter } from "../store/modelfile-request.ts";
import type { PullProgress } from "../store/pull-progress.ts";
import { serverImporter } from "./remote-blobs.ts";
import { ServerClient } from "./server-client.ts";
import { formatModelName, parseModelName } from "../store/model-name.ts";
import { openStore } from "./model-store-access.ts";
import { terminalProgress } from "./terminal/progress-bar.ts";
import { UsageError } from "../usage-error.ts";
import { helpFlag, renderHelp, type Flags, type HelpPage } from "./help-layout.ts";

export const createFlags = {
  file: { type: "string", short: "f", value: "PATH", help: "the Modelfile (default ./Modelfile)" },
  quantize: { type: "string", short: "q", value: "TYPE", help: "quantize the weights with llama.cpp (Q4_0, Q4_K_M, Q5_K_M, Q6_K, Q8_0; from an F16 or F32 model)" },
  ...helpFlag,
} as const satisfies Flags;

export const createPage: HelpPage = {
  usage: ["llamux create NAME [-f Modelfile] [-q TYPE]"],
  description: `Creates the model NAME from a Modelfile: in the store of the server at LLAMUX_HOST (or OLLAMA_HOST) when
one answers, uploading the files the Modelfile names, else directly in the local store.`,
  sections: [{
    title: "Modelfile",
    items: [
      ["FROM ./model.gguf | MODEL", "the weights: a GGUF file (relative to the Modelfile) or a stored model"],
      ["FROM ./mmproj.gguf", "a second FROM naming a vision projector"],
      ["ADAPTER ./lora.gguf", "a LoRA adapter applied on top"],
      ['TEMPLATE """..."""', "the prompt template (Go text/template, as Ollama's)"],
      ['SYSTEM """..."""', "the default system prompt"],
      ["PARAMETER NAME VALUE", "a default option (temperature, top_k, stop, num_ctx, ...)"],
      ["MESSAGE user|assistant TEXT", "a seed conversation"],
      ['LICENSE """..."""', "the license text"],
    ],
  }],
  flags: createFlags,
};

export const createHelp = renderHelp(createPage);

export async function createCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: createFlags,
  });
  if (values.help) {
    console.log(createHelp);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError("create needs one model name");
  const quantize = checkQuantization(values.quantize);
  const file = resolve(values.file ?? "Modelfile");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`Cannot read Modelfile "${file}": ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`);
  }
  const modelfile = parseModelfile(text);
  for (const warning of modelfile.warnings) console.error(`warning: ${warning}`);
  const definition = modelDefinition(modelfile);
  for (const { instruction, line } of definition.unsupported) console.error(`warning: ${instruction} (line ${line}) is not supported and is ignored`);
  const name = formatModelName(parseModelName(positionals[0]!));
  const progress = terminalProgress();
  try {
    const client = await ServerClient.connect();
    if (client) {
      const request = await modelfileRequest(serverImporter(client), definition, dirname(file), progress.onProgress);
      // Ollama's wire name for the draft model's files
      const { draftFiles, ...rest } = request;
      const body = { model: name, ...rest, ...(draftFiles ? { draft_files: draftFiles } : {}), ...(quantize ? { quantize } : {}), stream: true };
      for await (const event of client.stream<PullProgress>("/api/create", body)) progress.onProgress(event);
    } else {
      const store = openStore();
      const request = await modelfileRequest(storeImporter(store), definition, dirname(file), progress.onProgress);
      await createModel(store, name, { ...request, ...(quantize ? { quantize } : {}) }, progress.onProgress);
    }
  } finally {
    progress.finish();
  }
  return 0;
}
