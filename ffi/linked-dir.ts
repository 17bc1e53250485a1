// A directory of symbolic links made once and shared between processes: built under a temporary name and
// renamed into place, so processes starting together never see a half-made one, and made again when a
// link no longer leads anywhere (what it pointed into has moved).
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";

/**
 * The first of `candidates` that holds, or can be made to hold, exactly one link per name of `links`
 * (name to target; `target(name, dir)` may depend on where the directory is). Undefined when none can.
 */
export function linkedDirectory(candidates: string[], names: string[], target: (name: string, dir: string) => string): string | undefined {
  const wanted = [...names].sort();
  for (const dir of candidates) {
    if (isComplete(dir, wanted)) return dir;
    const staging = `${dir}.${process.pid}.tmp`;
    try {
      rmSync(staging, { recursive: true, force: true });
      mkdirSync(staging, { recursive: true });
      for (const name of wanted) symlinkSync(target(name, dir), join(staging, name));
      rmSync(dir, { recursive: true, force: true });
      renameSync(staging, dir);
      return dir;
    } catch {
      rmSync(staging, { recursive: true, force: true });
      if (isComplete(dir, wanted)) return dir; // another process made it meanwhile
    }
  }
  return undefined;
}

function isComplete(dir: string, wanted: string[]): boolean {
  try {
    const present = readdirSync(dir).sort();
    // existsSync follows each link: one into a directory that has moved away counts as missing.
    return present.length === wanted.length && present.every((name, i) => name === wanted[i] && existsSync(join(dir, name)));
  } catch {
    return false;
  }
}
