// `make release`: one executable per GPU variant, dist/llamux-<version>-<platform>[-cuda|-vulkan], each
// embedding its own llama.cpp libraries, then dist/SHA256SUMS over all of them and their sizes.
//
//   make release                                   the CPU executable (what CI builds), on the portable
//                                                  libraries compiled here (.native/lib-portable, built by
//                                                  `make llama-portable` when missing)
//   make release RELEASE_LIBS=prebuilt              the CPU executable on the prebuilt libraries of .native/lib
//   make release RELEASE_VARIANTS="cpu cuda vulkan"  also the GPU ones (downloads their prebuilt packages)
//
// Why portable by default: the same llama.cpp source compiled by this machine's compiler decodes one stream
// faster than the prebuilt packages' build, as fast as with several (docs/benchmarks/2026-11-25-server.md).
//
// With RELEASE_LIBS=prebuilt the CPU build reuses .native/lib when it holds the CPU libraries; a GPU variant
// gets its own directory, .native/variants/<gpu>/lib, filled by fetch-native.sh and completed with the shim
// and libmtmd by the Makefile's rules, so the libraries the tests use are never replaced.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import packageJson from "../package.json" with { type: "json" };
import nativePackages from "./native-packages.json" with { type: "json" };

const root = join(import.meta.dir, "..");
const dist = join(root, "dist");
const gpuNames = ["cpu", "cuda", "vulkan"] as const;
type Gpu = (typeof gpuNames)[number];

function fail(message: string): never {
  console.error(`release: ${message}`);
  process.exit(1);
}

function platform(): string {
  const arch = process.arch === "x64" ? "x64" : process.arch === "arm64" ? "arm64" : undefined;
  if (process.platform !== "linux" || !arch) fail(`release executables are built on Linux x64 or arm64, not ${process.platform}-${process.arch}`);
  return `linux-${arch}`;
}

function requestedVariants(): Gpu[] {
  const text = (process.env.RELEASE_VARIANTS ?? process.argv.slice(2).join(" ")).trim() || "cpu";
  const variants = text.split(/[\s,]+/).filter(Boolean);
  for (const variant of variants) if (!gpuNames.includes(variant as Gpu)) fail(`unknown variant "${variant}" (choose from ${gpuNames.join(", ")})`);
  return [...new Set(variants)] as Gpu[];
}

function run(command: string[], env: Record<string, string> = {}): void {
  console.log(`$ ${command.join(" ")}`);
  const result = Bun.spawnSync(command, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "inherit", "inherit"] });
  if (result.exitCode !== 0) fail(`"${command.join(" ")}" failed with exit code ${result.exitCode}`);
}

function requestedLibraries(): "prebuilt" | "portable" {
  const libs = (process.env.RELEASE_LIBS ?? "").trim() || "portable";
  if (libs !== "prebuilt" && libs !== "portable") fail(`unknown RELEASE_LIBS "${libs}" (choose prebuilt or portable)`);
  return libs;
}

const variantOf = (libDir: string) => (existsSync(join(libDir, "VARIANT")) ? readFileSync(join(libDir, "VARIANT"), "utf8").trim() : undefined);

/** A directory holding the complete library set of one variant (prebuilt libraries, shim, libmtmd, the RPC back end). */
function libraryDirectory(gpu: Gpu, plat: string): string {
  if (gpu === "cpu" && requestedLibraries() === "portable") return portableDirectory(plat);
  const wanted = `${plat}-${gpu}`;
  const defaultDir = join(root, ".native", "lib");
  if (variantOf(defaultDir) === wanted) return defaultDir;
  if (!(nativePackages.prebuilt as Record<string, unknown>)[wanted]) fail(`no prebuilt llama.cpp package for ${wanted} in scripts/native-packages.json`);
  const dir = join(root, ".native", "variants", gpu, "lib");
  const rel = relative(root, dir);
  if (variantOf(dir) !== wanted) run(["bash", "scripts/fetch-native.sh", gpu], { LIB: rel });
  // The same rules `make native` uses, pointed at this directory (LLAMUX_GPU keeps them from refetching).
  run(["make", "--no-print-directory", `LIB=${rel}`, `LLAMUX_GPU=${gpu}`, "companions"]);
  return dir;
}

/** The portable CPU set compiled from the pinned source, built when missing (make llama-portable). */
function portableDirectory(plat: string): string {
  const dir = join(root, ".native", "lib-portable");
  if (variantOf(dir) !== `${plat}-portable-cpu`) run(["make", "--no-print-directory", "llama-portable"]);
  else {
    // Present: only the shim and its companions are brought up to date (-o: never rebuild the libraries).
    const rel = relative(root, dir);
    run(["make", "--no-print-directory", `LIB=${rel}`, "-o", `${rel}/VARIANT`, "companions"]);
  }
  return dir;
}

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

const plat = platform();
const built: string[] = [];
for (const gpu of requestedVariants()) {
  const name = `llamux-${packageJson.version}-${plat}${gpu === "cpu" ? "" : `-${gpu}`}`;
  const output = join(dist, name);
  run([process.execPath, "scripts/build-binary.ts", "--lib-dir", libraryDirectory(gpu, plat), "--output", output]);
  built.push(output);
}

// The checksum file covers every release executable in dist/, also those of earlier runs for other variants.
const releases = readdirSync(dist).filter((file) => file.startsWith(`llamux-${packageJson.version}-`) && !file.endsWith(".part")).sort();
writeFileSync(join(dist, "SHA256SUMS"), releases.map((file) => `${sha256(join(dist, file))}  ${file}\n`).join(""));

console.log(`\nrelease ${packageJson.version} (llama.cpp ${nativePackages.llamaCppRelease}) in ${relative(process.cwd(), dist) || dist}:`);
for (const file of releases) console.log(`  ${file.padEnd(40)} ${mib(statSync(join(dist, file)).size).padStart(10)}${built.some((path) => basename(path) === file) ? "" : "  (built earlier)"}`);
console.log(`  SHA256SUMS (check with: cd dist && sha256sum -c SHA256SUMS)`);
