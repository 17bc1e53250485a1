// `llamux run MODEL "prompt"`: streams a completion of the prompt to stdout, through an engine child
// process exactly as the server will.
import { parseArgs } from "node:util";
import { existsSync } from "node:fs";
import { ModelManager } from "../engine/model-manager.ts";
import type { SamplerSettings } from "../../ffi/sampler.ts";

export const runHelp = `Usage: llamux run MODEL PROMPT [options]

Streams a completion of PROMPT from MODEL (a path to a GGUF file) to standard output.

Options:
  -n, --max-tokens N     most tokens to generate (default 256)
      --temperature T    sampling temperature; 0 is greedy (default 0.8)
      --top-k N          top-k sampling (default 40)
      --top-p P          nucleus sampling (default 0.95)
      --seed N           sampling seed (default random)
      --ctx-size N       context size in tokens (default 4096)
      --threads N        decode threads (default: physical cores)
      --stop TEXT        stop at TEXT (may be repeated)
      --verbose          print timings and token counts to standard error
  -h, --help             show this help`;

function resolveModel(nameOrPath: string): string {
  if (existsSync(nameOrPath)) return nameOrPath;
  throw new Error(`Cannot find model "${nameOrPath}": no such file (give the path of a GGUF file)`);
}

function numberOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new TypeError(`Cannot use --${name} "${value}": not a number`);
  return n;
}

export async function runCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      "max-tokens": { type: "string", short: "n" },
      temperature: { type: "string" },
      "top-k": { type: "string" },
      "top-p": { type: "string" },
      seed: { type: "string" },
      "ctx-size": { type: "string" },
      threads: { type: "string" },
      stop: { type: "string", multiple: true },
      verbose: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(runHelp);
    return 0;
  }
  if (positionals.length < 2) {
    console.error(`${runHelp}\n\nerror: MODEL and PROMPT are required`);
    return 2;
  }
  const [model, ...promptWords] = positionals;
  const modelPath = resolveModel(model!);
  const sampling: Partial<SamplerSettings> = {};
  const temperature = numberOption(values.temperature, "temperature");
  if (temperature !== undefined) sampling.temperature = temperature;
  const topK = numberOption(values["top-k"], "top-k");
  if (topK !== undefined) sampling.topK = topK;
  const topP = numberOption(values["top-p"], "top-p");
  if (topP !== undefined) sampling.topP = topP;
  sampling.seed = numberOption(values.seed, "seed") ?? Math.floor(Math.random() * 0xffffffff);

  const manager = new ModelManager();
  manager.installShutdownHandlers();
  const controller = new AbortController();
  try {
    const threads = numberOption(values.threads, "threads");
    const contextPerSequence = numberOption(values["ctx-size"], "ctx-size");
    const engine = await manager.engine({
      modelPath,
      parallel: 1,
      ...(threads !== undefined ? { threads } : {}),
      contextPerSequence: contextPerSequence ?? 4096,
    });
    const stream = engine.generate({
      prompt: promptWords.join(" "),
      maxTokens: numberOption(values["max-tokens"], "max-tokens") ?? 256,
      stop: values.stop ?? [],
      sampling,
    }, controller.signal);
    for await (const event of stream) {
      if (event.type === "token") process.stdout.write(event.text);
      else if (event.type === "error") throw new Error(event.message);
      else {
        process.stdout.write("\n");
        if (values.verbose) {
          const u = event.usage;
          const rate = u.decodeMs > 0 ? (u.completionTokens / (u.decodeMs / 1000)).toFixed(1) : "n/a";
          console.error(`finish: ${event.finishReason}; prompt ${u.promptTokens} tokens in ${u.promptMs.toFixed(0)} ms; ` +
            `${u.completionTokens} tokens generated, ${rate} tokens/s; first token after ${u.timeToFirstTokenMs.toFixed(0)} ms`);
        }
      }
    }
    return 0;
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    return 1;
  } finally {
    await manager.stopAll();
  }
}
