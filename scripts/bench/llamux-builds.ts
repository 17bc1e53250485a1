// What runs as llamux in the server parts of `make bench`: the executables people run, each with the
// llama.cpp library build it embeds, named under every row.
//   release   dist/llamux-<version>-linux-<arch> (`make release`: the portable libraries of
//             `make llama-portable`, what a release ships)
//   binary    dist/llamux (`make binary`: the prebuilt libraries of .native/lib)
//   checkout  bun src/main.ts on each library build of --libs (LLAMUX_LIB_DIR)
// An executable missing or older than the sources is rebuilt (bun build --compile, under a minute), but
// llama.cpp itself is never compiled here: without .native/lib-portable the release is reported missing
// with the command that builds it.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import packageJson from "../../package.json" with { type: "json" };
import type { LibrarySet } from "./libraries.ts";

export const LLAMUX_BUILD_KINDS = ["release", "binary", "checkout"] as const;
export type LlamuxBuildKind = (typeof LLAMUX_BUILD_KINDS)[number];

export interface LlamuxBuild {
  /** Short and unique in one run: "release", "binary", "checkout-source", "given". */
  id: string;
  /** What it is, for the report: "release executable dist/llamux-0.1.0-linux-x64". */
  what: string;
  /** The llama.cpp library build it runs on, as its VARIANT names it: "linux-x64-portable-cpu". */
  libraries: string;
  /** The command before `serve`. */
  command: string[];
  /** Environment it needs (the checkout's LLAMUX_LIB_DIR); never set for an executable, which would then skip its own libraries. */
  env: Record<string, string>;
}

/** "release (linux-x64-portable-cpu)": the name under every row. */
export const buildName = (build: LlamuxBuild) => `${build.id} (${build.libraries})`;

const REPO_ROOT = join(import.meta.dir, "..", "..");
const PORTABLE_DIR = join(REPO_ROOT, ".native", "lib-portable");
const PREBUILT_DIR = join(REPO_ROOT, ".native", "lib");
const arch = process.arch === "arm64" ? "arm64" : "x64";
export const RELEASE_PATH = join(REPO_ROOT, "dist", `llamux-${packageJson.version}-linux-${arch}`);
export const BINARY_PATH = join(REPO_ROOT, "dist", "llamux");

export interface FoundBuilds {
  builds: LlamuxBuild[];
  /** One line per requested build that is not here, saying how to make it. */
  missing: string[];
}

export interface FindOptions {
  /** Library sets for `checkout`. */
  libraries: LibrarySet[];
  /** Rebuild a missing or stale executable (bun build --compile); false: report it missing or stale instead. */
  build: boolean;
  /** --server-binary: this executable as well, first. */
  given?: string;
  log: (line: string) => void;
}

export function findLlamuxBuilds(kinds: LlamuxBuildKind[], o: FindOptions): FoundBuilds {
  const builds: LlamuxBuild[] = [];
  const missing: string[] = [];
  if (o.given) builds.push(executable("given", o.given, `executable ${show(o.given)}`));
  for (const kind of kinds) {
    if (kind === "checkout") {
      for (const set of o.libraries) {
        builds.push({ id: `checkout-${set.kind}`, what: `bun src/main.ts with LLAMUX_LIB_DIR=${show(set.dir)}`, libraries: set.variant, command: [process.execPath, join(REPO_ROOT, "src", "main.ts")], env: { LLAMUX_LIB_DIR: set.dir } });
      }
      continue;
    }
    const release = kind === "release";
    const path = release ? RELEASE_PATH : BINARY_PATH;
    const libDir = release ? PORTABLE_DIR : PREBUILT_DIR;
    const make = release ? "make release" : "make binary";
    if (release && !isPortableSet(libDir)) {
      missing.push(`release executable (${show(path)}) not measured: its portable libraries (.native/lib-portable) are missing; build them with \`make llama-portable\` (about 5 minutes on 2 cores), then \`make release\` (or run make bench again, which builds it)`);
      continue;
    }
    const stale = staleness(path, libDir);
    if (stale) {
      if (!o.build) {
        missing.push(`${kind} executable (${show(path)}) not measured: ${stale}; build it with \`${make}\``);
        continue;
      }
      o.log(`${show(path)}: ${stale}, running \`${make}\``);
      const env = release ? { RELEASE_LIBS: "portable", RELEASE_VARIANTS: "cpu" } : {};
      const result = Bun.spawnSync(["make", "--no-print-directory", release ? "release" : "binary"], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "inherit", "inherit"] });
      if (result.exitCode !== 0 || !existsSync(path)) {
        missing.push(`${kind} executable (${show(path)}) not measured: \`${make}\` failed with exit code ${result.exitCode}`);
        continue;
      }
    }
    builds.push(executable(kind, path, `${kind} executable ${show(path)} (\`${make}\`)`));
  }
  return { builds, missing };
}

function executable(id: string, path: string, what: string): LlamuxBuild {
  return { id, what, libraries: embeddedVariant(path), command: [path], env: {} };
}

/** The library build an executable runs on, as it says itself (`llamux doctor`: "native libraries  VARIANT in DIR"). */
export function embeddedVariant(path: string): string {
  const env: Record<string, string | undefined> = { ...process.env, LLAMUX_LOG_LEVEL: "warn" };
  delete env.LLAMUX_LIB_DIR;
  const result = Bun.spawnSync([path, "doctor"], { env, stdout: "pipe", stderr: "pipe", timeout: 60_000 });
  const match = /native libraries\s+(\S+) in /.exec(result.stdout.toString());
  return match?.[1] ?? "libraries unknown";
}

function isPortableSet(dir: string): boolean {
  const variantFile = join(dir, "VARIANT");
  return existsSync(variantFile) && readFileSync(variantFile, "utf8").includes("-portable-");
}

/** Why an executable needs building: missing, or older than a source file or a library it embeds; undefined when current. */
function staleness(path: string, libDir: string): string | undefined {
  if (!existsSync(path)) return "missing";
  const built = statSync(path).mtimeMs;
  const newer = [join(REPO_ROOT, "src"), join(REPO_ROOT, "ffi"), libDir, join(REPO_ROOT, "package.json")].map((p) => newestFile(p)).find((f) => f && f.mtimeMs > built);
  return newer ? `older than ${show(newer.path)}` : undefined;
}

function newestFile(path: string): { path: string; mtimeMs: number } | undefined {
  if (!existsSync(path)) return undefined;
  const stat = statSync(path);
  if (!stat.isDirectory()) return { path, mtimeMs: stat.mtimeMs };
  let newest: { path: string; mtimeMs: number } | undefined;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const found = newestFile(join(path, entry.name));
    if (found && (!newest || found.mtimeMs > newest.mtimeMs)) newest = found;
  }
  return newest;
}

const show = (path: string) => relative(process.cwd(), path) || path;
