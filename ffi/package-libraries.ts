// Installed from npm, llamux has no .native/lib: llama.cpp's prebuilt libraries come from the
// @node-llama-cpp/<platform> package npm installed beside it (a dependency of llamux's package), and llamux's
// own (its shim, libmtmd and the RPC back end, compiled against those) from the package's native/ folder.
// prebuilt.json there names the packages and their library folders; VARIANT names the set. Both kinds
// are linked into one directory, so that everything that looks for "the library directory" finds them
// together (ggml loads its CPU back ends from it, the shim's $ORIGIN points into it).
import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { linkedDirectory } from "./linked-dir.ts";

/** A package of prebuilt libraries and where in it they lie. */
interface PrebuiltPackage {
  package: string;
  dir: string;
}

const isLibraryFile = (name: string) => /\.so(\.\d+)*$|\.dylib$/.test(name) || name === "VARIANT";

/** The directory of links for the package's libraries in `nativeDir` (the package's native/ folder). */
export function packageLibraryDir(nativeDir: string): string {
  const prebuilt = JSON.parse(readFileSync(join(nativeDir, "prebuilt.json"), "utf8")) as PrebuiltPackage[];
  const targets = new Map<string, string>();
  for (const { package: name, dir } of prebuilt) {
    const folder = join(packageRoot(name), dir);
    for (const file of readdirSync(folder)) if (isLibraryFile(file)) targets.set(file, join(folder, file));
  }
  // llamux's own come last: a name in both is the package's own build.
  for (const file of readdirSync(nativeDir)) if (isLibraryFile(file)) targets.set(file, join(nativeDir, file));
  const key = createHash("sha256").update([...targets].sort().join("\n")).digest("hex").slice(0, 12);
  const candidates = [join(nativeDir, `linked-${key}`), join(tmpdir(), `llamux-npm-libraries-${key}`)];
  const linked = linkedDirectory(candidates, [...targets.keys()], (name) => targets.get(name)!);
  if (!linked) throw new Error(`Cannot link llama.cpp's libraries into ${candidates.join(" or ")}: set LLAMUX_LIB_DIR to a directory that holds them`);
  return linked;
}

function packageRoot(name: string): string {
  let entry: string;
  try {
    entry = fileURLToPath(import.meta.resolve(name));
  } catch {
    throw new Error(`Cannot find llama.cpp's libraries: the package ${name} is not installed (npm installs it with llamux on the platform it was built for; elsewhere set LLAMUX_LIB_DIR)`);
  }
  // The package's entry is <root>/dist/index.js.
  return dirname(dirname(entry));
}
