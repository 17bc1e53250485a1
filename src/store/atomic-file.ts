// Durable, atomic file replacement: write a temporary file in the same directory, fsync it, rename it
// over the target, fsync the directory. A crash at any moment leaves either the old file or the new
// one, never a torn one; what can be left behind is a temporary file, removed once its writer is dead.
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, rmSync } from "node:fs";
import { open, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";

const TEMP_PREFIX = ".llamux-tmp-";
const TEMP_PATTERN = /^\.llamux-tmp-(\d+)-[0-9a-z]+$/;

/** A fresh temporary file name in `dir`, unique per process and call, that `isTempFile` recognises. */
export function tempPathIn(dir: string): string {
  return join(dir, `${TEMP_PREFIX}${process.pid}-${Math.random().toString(36).slice(2, 10)}`);
}

export function isTempFile(name: string): boolean {
  return TEMP_PATTERN.test(name);
}

/** Makes a rename or unlink in `dir` survive a power loss. */
export function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // some file systems refuse fsync on directories; the rename itself is still atomic
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Renames `from` over `to` and makes the rename durable. */
export async function renameDurably(from: string, to: string): Promise<void> {
  await rename(from, to);
  syncDirectory(dirname(to));
}

/** Writes `data` to `path` atomically (the directory is created when missing), with permissions `mode`. */
export async function writeFileAtomic(path: string, data: Uint8Array | string, mode = 0o644): Promise<void> {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true });
  const temp = tempPathIn(dir);
  try {
    const handle = await open(temp, "w", mode);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await renameDurably(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** Removes temporary files in `dir` (names `pattern` matches, its first group the writer's pid) whose writing process no longer runs. */
export function removeAbandonedTempFiles(dir: string, pattern: RegExp = TEMP_PATTERN): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const match = pattern.exec(name);
    if (!match) continue;
    const pid = Number(match[1]);
    if (pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ESRCH") rmSync(join(dir, name), { force: true });
    }
  }
}
