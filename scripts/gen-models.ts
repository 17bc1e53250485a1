// Generates the random-weight GGUF models used by tests and benchmarks, and caches them.
// As a module: `await ensureModel("tiny-llama")` returns the path, generating the file once.
// As a CLI: `bun scripts/gen-models.ts --help`.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, symlinkSync } from "node:fs";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import { type GgufTensorInput, type GgufTensorSink, ggmlTensorByteSize, writeGguf } from "../src/store/gguf.ts";
import {
  BENCH_MODEL_NAMES,
  MODEL_NAMES,
  MODEL_RECIPES,
  type ModelName,
  type ModelRecipe,
  type QuantizationType,
  TINY_MODEL_NAMES,
  isModelName,
} from "./models/catalog.ts";
import { REPO_ROOT } from "./models/tokenizers.ts";
import { removeAbandonedTempFiles } from "../src/store/atomic-file.ts";

/** `<model file>.tmp-<pid>-<random>`: temp files of generator processes that died (Ctrl-C during a 2.5 GB model) are removed. */
const GENERATOR_TEMP = /\.tmp-(\d+)-[0-9a-z]+$/;

export { BENCH_MODEL_NAMES, MODEL_NAMES, TINY_MODEL_NAMES, isModelName, type ModelName };

export interface EnsureModelOptions {
  /** progress lines (generation can take a while for benchmark shapes); silent by default */
  log?: (line: string) => void;
  /** regenerate even if a cached file exists */
  force?: boolean;
}

/** `LLAMUX_MODELS_CACHE`, else `<repo>/.models` (gitignored). */
export function modelsCacheDir(): string {
  return process.env.LLAMUX_MODELS_CACHE || join(REPO_ROOT, ".models");
}

function recipeOf(name: ModelName): ModelRecipe {
  const recipe = MODEL_RECIPES.get(name);
  if (!recipe) throw new Error(`Unknown model "${name}"; known models: ${MODEL_NAMES.join(", ")}`);
  return recipe;
}

/** Where the model's file is (or will be): the name carries a hash of the recipe, so a changed recipe is regenerated. */
export function modelPath(name: ModelName): string {
  const recipe = recipeOf(name);
  return join(modelsCacheDir(), `${name}-${recipe.fingerprint}.gguf`);
}

const inFlight = new Map<string, Promise<string>>();

/** Returns the path of the cached model file, generating it first if missing. Safe to call from parallel processes. */
export async function ensureModel(name: ModelName, options: EnsureModelOptions = {}): Promise<string> {
  const path = modelPath(name);
  if (!options.force && existsSync(path)) return path;
  let pending = inFlight.get(path);
  if (!pending) {
    pending = generate(name, path, options).finally(() => inFlight.delete(path));
    inFlight.set(path, pending);
  }
  return pending;
}

async function generate(name: ModelName, path: string, options: EnsureModelOptions): Promise<string> {
  const log = options.log ?? (() => {});
  const recipe = recipeOf(name);
  const dir = modelsCacheDir();
  mkdirSync(dir, { recursive: true });
  removeAbandonedTempFiles(dir, GENERATOR_TEMP);
  // unique per process and call: parallel generators never share a temp file, and rename() is atomic
  const temp = join(dir, `${basename(path)}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 10)}`);
  const started = performance.now();
  try {
    if (recipe.kind === "generated") {
      log(`${name}: building`);
      const content = recipe.build();
      const totalBytes = content.tensors.reduce((sum, t) => sum + tensorBytes(t), 0);
      let doneBytes = 0;
      let lastReport = performance.now();
      const tensors = content.tensors.map((tensor) => {
        if (!tensor.write) return tensor;
        const write = tensor.write;
        return {
          ...tensor,
          write: (sink: GgufTensorSink) =>
            write({
              write(chunk) {
                sink.write(chunk);
                doneBytes += chunk.byteLength;
                if (performance.now() - lastReport > 2000) {
                  lastReport = performance.now();
                  log(`${name}: ${((100 * doneBytes) / totalBytes).toFixed(0)}% of ${formatBytes(totalBytes)}`);
                }
              },
            }),
        };
      });
      await writeGguf(temp, { metadata: content.metadata, tensors });
    } else {
      const source = await ensureModel(recipe.source, { log });
      log(`${name}: quantizing ${basename(source)} to ${recipe.type}`);
      await quantize(source, temp, recipe.type);
    }
    renameSync(temp, path);
  } finally {
    rmSync(temp, { force: true });
  }
  linkStableName(dir, name, path);
  log(`${name}: ${formatBytes(statSync(path).size)} in ${((performance.now() - started) / 1000).toFixed(1)} s -> ${path}`);
  return path;
}

function tensorBytes(tensor: GgufTensorInput): number {
  return tensor.data ? tensor.data.byteLength : ggmlTensorByteSize(tensor.type, tensor.shape);
}

async function quantize(input: string, output: string, type: QuantizationType): Promise<void> {
  // imported lazily: only the quantized (benchmark) models need libllama loaded
  const { quantizeModel } = await import("../ffi/llama.ts");
  quantizeModel(input, output, type);
}

/** `<name>.gguf` -> the current hashed file, for people and scripts that want a fixed path. */
function linkStableName(dir: string, name: string, path: string): void {
  const link = join(dir, `${name}.gguf`);
  const tempLink = `${link}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  try {
    symlinkSync(basename(path), tempLink);
    renameSync(tempLink, link);
  } catch {
    rmSync(tempLink, { force: true });
  }
}

/**
 * Deletes cached files of older recipes. Not done by ensureModel: checkouts sharing one LLAMUX_MODELS_CACHE
 * may use different recipes, and would delete each other's files.
 */
export function pruneModelsCache(): string[] {
  const dir = modelsCacheDir();
  if (!existsSync(dir)) return [];
  removeAbandonedTempFiles(dir, GENERATOR_TEMP);
  const current = new Set(MODEL_NAMES.map((name) => basename(modelPath(name))));
  const removed: string[] = [];
  for (const file of readdirSync(dir)) {
    const match = /^(.+)-[0-9a-f]{8}\.gguf$/.exec(file);
    if (match && isModelName(match[1]!) && !current.has(file)) {
      rmSync(join(dir, file), { force: true });
      removed.push(file);
    }
  }
  for (const name of MODEL_NAMES) {
    if (existsSync(modelPath(name))) linkStableName(dir, name, modelPath(name));
    else rmSync(join(dir, `${name}.gguf`), { force: true });
  }
  return removed;
}

function formatBytes(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  return `${(n / 1e3).toFixed(1)} kB`;
}

const HELP = `Usage: bun scripts/gen-models.ts [options] [names...]

Generates random-weight GGUF models with real tokenizers into the cache
(${"$"}LLAMUX_MODELS_CACHE, default <repo>/.models). Cached models are reused.

With no names, generates the tiny test models.

Options:
  --all      the tiny test models and the benchmark models
  --bench    the benchmark models (big: LFM2-350M and Llama-1B shapes, F16, Q4_0, Q8_0)
  --force    regenerate even if cached
  --list     list the models and their cache state, generate nothing
  --prune    delete cached files of older recipes and temp files of dead runs, fix the
             <name>.gguf links, generate nothing
  -h, --help show this help

Tiny models:      ${TINY_MODEL_NAMES.join(", ")}
Benchmark models: ${BENCH_MODEL_NAMES.join(", ")}`;

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        all: { type: "boolean" },
        bench: { type: "boolean" },
        force: { type: "boolean" },
        list: { type: "boolean" },
        prune: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  for (const name of positionals) {
    if (!isModelName(name)) {
      console.error(`Unknown model "${name}"\n\n${HELP}`);
      return 2;
    }
  }
  let names: ModelName[] = positionals as ModelName[];
  if (values.all) names = [...MODEL_NAMES];
  else if (values.bench) names = [...names, ...BENCH_MODEL_NAMES];
  else if (names.length === 0) names = [...TINY_MODEL_NAMES];

  if (values.prune) {
    const removed = pruneModelsCache();
    console.log(removed.length ? `Removed ${removed.join(", ")}` : "Nothing to remove");
    return 0;
  }
  if (values.list) {
    for (const name of MODEL_NAMES) {
      const path = modelPath(name);
      const state = existsSync(path) ? formatBytes(statSync(path).size) : "not generated";
      console.log(`${name.padEnd(16)} ${state.padEnd(14)} ${path}`);
    }
    return 0;
  }

  const log = (line: string) => console.log(line);
  for (const name of names) {
    const path = modelPath(name);
    if (!values.force && existsSync(path)) {
      linkStableName(modelsCacheDir(), name, path);
      log(`${name}: cached (${formatBytes(statSync(path).size)}) ${path}`);
      continue;
    }
    try {
      await ensureModel(name, { log, force: values.force });
    } catch (error) {
      console.error(`${name}: ${(error as Error).message}`);
      return 1;
    }
  }
  return 0;
}

if (import.meta.main) {
  process.exit(await main(process.argv.slice(2)));
}
