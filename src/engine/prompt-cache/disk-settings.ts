// Where the disk tier lives and how much it may take, from the flags (--cache-disk, --cache-disk-mib) or
// their defaults: `<cache>/prompts` beside the extracted libraries ($LLAMUX_CACHE_DISK, else
// $LLAMUX_CACHE_DIR, $XDG_CACHE_HOME/llamux or ~/.cache/llamux), and 8 GiB, at most a tenth of the free
// space of that disk when the server starts.
//
// Why 8 GiB: it is the host tier's default (llama-server's --cache-ram), so what host memory held fits on
// disk too; it holds an 11k-token agent prompt's state about 60 times for a 350M hybrid model (130 MiB),
// 23 times for a 1B Llama-shaped one (350 MiB) and 5 times for an 8B one (1.4 GiB), which covers the
// sessions one person runs. A tenth of the free space keeps it from filling a small disk.
import { mkdirSync, statfsSync } from "node:fs";
import { dirname, join } from "node:path";
import { cacheRoot } from "../../binary/extract-libraries.ts";

export const DEFAULT_CACHE_DISK_MIB = 8192;
/** Share of the disk's free space the default may take. */
const FREE_SPACE_SHARE = 0.1;

/**
 * The disk tier's directory and MiB, or undefined when it is off (0 MiB). `named`: the directory was asked
 * for (--cache-disk, $LLAMUX_CACHE_DISK) rather than taken by default.
 */
export function cacheDiskSettings(flags: { dir?: string; limitMiB?: number }, env: NodeJS.ProcessEnv = process.env): { dir: string; limitMiB: number; named: boolean } | undefined {
  const named = flags.dir ?? (env.LLAMUX_CACHE_DISK || undefined);
  const dir = named ?? join(cacheRoot(env), "prompts");
  const limitMiB = flags.limitMiB ?? Math.min(DEFAULT_CACHE_DISK_MIB, Math.floor((freeBytesAt(dir) * FREE_SPACE_SHARE) / 1048576));
  return limitMiB > 0 ? { dir, limitMiB, named: named !== undefined } : undefined;
}

/** Free bytes on the disk that holds `dir` (or would: its nearest existing parent). */
function freeBytesAt(dir: string): number {
  for (let path = dir; ; path = dirname(path)) {
    try {
      const stats = statfsSync(path);
      return stats.bavail * stats.bsize;
    } catch {
      if (dirname(path) === path) return 0;
    }
  }
}

/**
 * Makes the directory now. One that was asked for and cannot be made stops the server at start; the default
 * one (a read-only home, a container's library folder) only turns the tier off: the reason is returned.
 */
export function ensureCacheDiskDir(settings: { dir: string; named: boolean }): string | undefined {
  try {
    mkdirSync(settings.dir, { recursive: true });
    return undefined;
  } catch (error) {
    const reason = `Cannot use prompt cache directory "${settings.dir}": ${(error as Error).message} (set --cache-disk to a writable directory, or --cache-disk-mib 0)`;
    if (settings.named) throw new Error(reason);
    return reason;
  }
}
