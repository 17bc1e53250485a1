// The llama.cpp library builds llamux can run on: the prebuilt npm libraries, a build from source tuned for
// this machine (`make llama-from-source`, built like llama-server) and a portable build from source with
// one CPU back end per x86 generation (`make llama-portable`, what a release can ship). The engine is
// pointed at one with LLAMUX_LIB_DIR.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const LIBRARY_KINDS = ["prebuilt", "source", "portable"] as const;
export type LibraryKind = (typeof LIBRARY_KINDS)[number];

/** The kind of a set from its VARIANT: "linux-x64-cpu", "linux-x64-source-cpu", "linux-x64-portable-cpu". */
export function libraryKindOf(variant: string): LibraryKind {
  return variant.includes("-portable-") ? "portable" : variant.includes("-source-") ? "source" : "prebuilt";
}

/** The command that makes a set of this kind. */
export const LIBRARY_BUILD_COMMAND: Record<LibraryKind, string> = {
  prebuilt: "make native", source: "make llama-from-source", portable: "make llama-portable",
};

export interface LibrarySet {
  kind: LibraryKind;
  dir: string;
  variant: string; // contents of VARIANT, e.g. "linux-x64-cpu" or "linux-x64-source-cpu"
}

const REPO_ROOT = join(import.meta.dir, "..", "..");
const NATIVE_DIR = join(REPO_ROOT, ".native");

/**
 * Every .native/lib* directory that holds a library set (VARIANT, libllama), classified by its VARIANT.
 * .native/lib, the one llamux uses by default, comes first so that it wins when a kind appears twice.
 */
export function findLibrarySets(): LibrarySet[] {
  if (!existsSync(NATIVE_DIR)) return [];
  const names = readdirSync(NATIVE_DIR).filter((n) => n === "lib" || n.startsWith("lib-")).sort((a, b) => (a === "lib" ? -1 : b === "lib" ? 1 : a.localeCompare(b)));
  const sets: LibrarySet[] = [];
  for (const name of names) {
    const dir = join(NATIVE_DIR, name);
    const variantFile = join(dir, "VARIANT");
    if (!existsSync(variantFile)) continue; // the shim may be missing: refreshShim builds it
    if (!readdirSync(dir).some((f) => f.startsWith("libllama.") && f.endsWith(".so"))) continue;
    const variant = readFileSync(variantFile, "utf8").trim();
    sets.push({ kind: libraryKindOf(variant), dir, variant });
  }
  return sets;
}

/** Picks one set per requested kind; kinds with no set are returned as missing (reported, not fatal). */
export function selectLibrarySets(requested: LibraryKind[], available: LibrarySet[]): { selected: LibrarySet[]; missing: LibraryKind[] } {
  const selected: LibrarySet[] = [];
  const missing: LibraryKind[] = [];
  for (const kind of requested) {
    const set = available.find((s) => s.kind === kind);
    if (set) selected.push(set);
    else missing.push(kind);
  }
  return { selected, missing };
}

/**
 * Builds or relinks the shim of a set outside .native/lib when missing or older than ffi/shim.c (the engine
 * needs the current shim's symbols). `-o VARIANT`: never let make re-fetch prebuilt libraries over a kept set.
 */
export async function refreshShim(set: LibrarySet): Promise<void> {
  if (resolve(set.dir) === resolve(NATIVE_DIR, "lib")) return; // `make bench` set that one up already
  const lib = `.native/${set.dir.split("/").at(-1)}`;
  const child = Bun.spawn(["make", "--no-print-directory", `LIB=${lib}`, "-o", `${lib}/VARIANT`, `${lib}/libllamux-shim.so`], {
    cwd: REPO_ROOT, stdout: "inherit", stderr: "inherit",
  });
  if ((await child.exited) !== 0) throw new Error(`could not relink ${lib}/libllamux-shim.so`);
}
