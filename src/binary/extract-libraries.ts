// The compiled executable carries llama.cpp's shared libraries inside itself, under /$bunfs/, where
// dlopen cannot reach them. This copies them once into a per-version cache directory that is either
// complete or absent: files are written into a temporary directory beside it, which is then renamed
// into place, so two first starts racing each other both end up using one complete copy.
import { closeSync, existsSync, fsyncSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { logger } from "../log.ts";

const log = logger("binary");

/** One file of the library directory as the build embedded it. */
export type EmbeddedLibrary =
  | { name: string; embeddedPath: string; size: number }
  /** A symbolic link to another library of the same directory (versioned sonames of GPU runtimes). */
  | { name: string; linkTo: string };

export interface LibraryBundle {
  /** llamux's version: one cache directory per version and content. */
  version: string;
  /** Hash of the embedded libraries' names and bytes, computed at build time. */
  contentHash: string;
  libraries: EmbeddedLibrary[];
}

/** Stale temporary directories of interrupted extractions are removed after this long. */
const STALE_TEMP_MS = 60 * 60 * 1000;

/** Where extracted libraries live: $LLAMUX_CACHE_DIR, else $XDG_CACHE_HOME/llamux, else ~/.cache/llamux. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LLAMUX_CACHE_DIR) return env.LLAMUX_CACHE_DIR;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, "llamux");
  return join(env.HOME || homedir(), ".cache", "llamux");
}

/** Returns a directory holding every library of the bundle, extracting them first if needed. */
export function extractLibraries(bundle: LibraryBundle, root: string = cacheRoot()): string {
  const dir = join(root, `${bundle.version}-${bundle.contentHash}`);
  if (existsSync(dir)) return checkedDirectory(dir, bundle);

  try {
    mkdirSync(root, { recursive: true });
  } catch (error) {
    throw new Error(`Cannot create cache directory "${root}": ${(error as Error).message} (set LLAMUX_CACHE_DIR to a writable directory)`);
  }
  const temp = mkdtempSync(join(root, `.${basename(dir)}.tmp-`));
  try {
    for (const library of bundle.libraries) writeLibrary(temp, library);
    renameSync(temp, dir);
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    const code = (error as NodeJS.ErrnoException).code;
    // Another process renamed its complete copy into place first: use that one.
    if ((code === "ENOTEMPTY" || code === "EEXIST") && existsSync(dir)) {
      log.debug(`another process extracted the libraries first; using "${dir}"`);
      return checkedDirectory(dir, bundle);
    }
    throw new Error(`Cannot extract llamux's libraries to "${dir}": ${(error as Error).message}`);
  }
  log.debug(`extracted ${bundle.libraries.length} libraries to "${dir}"`);
  removeStaleTemporaries(root);
  return dir;
}

function writeLibrary(dir: string, library: EmbeddedLibrary): void {
  const target = join(dir, library.name);
  if ("linkTo" in library) {
    symlinkSync(library.linkTo, target);
    return;
  }
  const bytes = readFileSync(library.embeddedPath);
  const fd = openSync(target, "wx", 0o755);
  try {
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    // Durable before the rename publishes it, so a crash cannot leave a complete-looking, truncated copy.
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

// A published directory was complete when it was renamed into place; a file missing or of the wrong
// size means someone changed it since, and loading from it could crash later in a confusing way.
function checkedDirectory(dir: string, bundle: LibraryBundle): string {
  for (const library of bundle.libraries) {
    const path = join(dir, library.name);
    const problem = "linkTo" in library ? linkProblem(path) : sizeProblem(path, library.size);
    if (problem) throw new Error(`Cannot use llamux's extracted libraries in "${dir}": ${library.name} ${problem}; delete that directory and start llamux again`);
  }
  return dir;
}

function sizeProblem(path: string, size: number): string | undefined {
  try {
    const actual = statSync(path).size;
    return actual === size ? undefined : `has ${actual} bytes instead of ${size}`;
  } catch {
    return "is missing";
  }
}

function linkProblem(path: string): string | undefined {
  try {
    lstatSync(path);
    return existsSync(path) ? undefined : "is a broken link";
  } catch {
    return "is missing";
  }
}

function removeStaleTemporaries(root: string): void {
  try {
    for (const name of readdirSync(root)) {
      if (!name.startsWith(".") || !name.includes(".tmp-")) continue;
      const path = join(root, name);
      if (Date.now() - statSync(path).mtimeMs > STALE_TEMP_MS) rmSync(path, { recursive: true, force: true });
    }
  } catch {
    // best effort: a leftover temporary directory wastes space but breaks nothing
  }
}
