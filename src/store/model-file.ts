// The last check before libllama opens a model file: the GGUF header must read cleanly (a truncated or
// malformed file fails here with the reader's reason, not inside llama.cpp), and a file that needs the
// LFM2 repair is loaded from a repaired copy in the cache, made the first time. The original is never
// modified: it may belong to an Ollama model directory.
import { createHash } from "node:crypto";
import { existsSync, realpathSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { cacheRoot } from "../binary/extract-libraries.ts";
import { readGgufHeaderSync } from "./gguf.ts";
import { lfm2RepairsNeeded, repairLfm2File } from "./lfm2-repair.ts";
import { logger } from "../log.ts";

const log = logger("store");

/** Where repaired copies of model files go: `<cache>/repaired` (LLAMUX_CACHE_DIR, XDG_CACHE_HOME, ~/.cache/llamux). */
export function repairedModelsDir(): string {
  return join(cacheRoot(), "repaired");
}

/** A name for the repaired copy: the blob's own name for store blobs, else a hash of path, size and time. */
function repairedName(path: string): string {
  const name = basename(path);
  if (/^sha256-[0-9a-f]{64}$/.test(name)) return `${name}.gguf`;
  const { size, mtimeMs } = statSync(path);
  const key = createHash("sha256").update(`${realpathSync(path)}\0${size}\0${mtimeMs}`).digest("hex").slice(0, 32);
  return `${key}.gguf`;
}

const repairsInProgress = new Map<string, Promise<string>>();

/**
 * The path libllama should load for `path`: the file itself, or its repaired copy. Throws
 * GgufReadError for a file that is not a complete GGUF.
 */
export async function loadableModelPath(path: string, options: { repairDir?: string } = {}): Promise<string> {
  const header = readGgufHeaderSync(path, { maxArrayLength: 0 });
  const repairs = lfm2RepairsNeeded(header);
  if (repairs.length === 0) return path;
  const destination = join(options.repairDir ?? repairedModelsDir(), repairedName(path));
  if (existsSync(destination)) return destination;
  let pending = repairsInProgress.get(destination);
  if (!pending) {
    log.info(`"${path}" was published for Ollama; writing a copy llama.cpp can load (${repairs.join("; ")}) to ${destination}`);
    pending = repairLfm2File(path, destination)
      .then(() => destination)
      .finally(() => repairsInProgress.delete(destination));
    repairsInProgress.set(destination, pending);
  }
  return pending;
}
