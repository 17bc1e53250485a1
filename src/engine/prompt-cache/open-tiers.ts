// An engine's prompt-cache tiers as its options ask: the host-memory cache (--cache-ram) and the disk tier
// (--cache-disk), which lives beside a host cache only.
import { totalmem } from "node:os";
import { logger } from "../../log.ts";
import type { EngineOptions } from "../types.ts";
import { PromptCache, type PromptCacheEntry } from "./host-cache.ts";
import { DiskPromptStore } from "./disk-store.ts";
import { stateKey } from "./state-key.ts";

const log = logger("engine");

/** llama-server's --cache-ram default. */
export const DEFAULT_CACHE_RAM_MIB = 8192;

/**
 * The host prompt cache of an engine: --cache-ram MiB, by default llama-server's 8 GiB but at most a
 * quarter of the machine's memory (several models may be loaded, each with its own cache). None for
 * embedding models, which keep nothing between inputs.
 */
export function promptCacheFor(options: EngineOptions, canRollBack: boolean, onEvict: (entry: PromptCacheEntry) => void): PromptCache | undefined {
  if (options.embeddings) return undefined;
  const mib = options.cacheRamMiB ?? Math.min(DEFAULT_CACHE_RAM_MIB, Math.floor(totalmem() / 4 / 1048576));
  if (mib <= 0) return undefined;
  log.debug(`prompt cache of up to ${mib} MiB for "${options.modelPath}"`);
  return new PromptCache(mib * 1048576, canRollBack, { log: (message) => log.info(message), onEvict });
}

/** Opens the disk tier of an engine's prompt cache (it lives beside a host cache only). */
export async function openDiskCache(options: EngineOptions, canRollBack: boolean): Promise<DiskPromptStore | undefined> {
  const disk = options.cacheDisk;
  if (!disk || disk.limitMiB <= 0) return undefined;
  const key = await stateKey({
    modelPath: options.modelPath, ...(options.projectorPath ? { projectorPath: options.projectorPath } : {}),
    ...(options.loraAdapters ? { loraAdapters: options.loraAdapters } : {}),
    ...(options.kvCacheType ? { kvCacheType: options.kvCacheType } : {}), ...(options.flashAttention ? { flashAttention: options.flashAttention } : {}),
  });
  const store = await DiskPromptStore.open({
    dir: disk.dir, limitBytes: disk.limitMiB * 1048576, key, canRollBack,
    log: (level, message) => log[level](message),
  });
  log.debug(`prompt cache on disk: ${store.stats().entries} states for "${options.modelPath}" in ${disk.dir} (up to ${disk.limitMiB} MiB)`);
  return store;
}

