// `make package`: the SDK as an npm package, dist/npm/llamux-<version>.tgz. TypeScript compiles the SDK's
// modules (and the command line and workers they start) to JavaScript with .d.ts types, keeping the
// repository's layout (tsconfig.package.json); package.json's exports separate the in-process part
// ("llamux": Bun, bun:ffi) from the remote one ("llamux/remote": Node 20+, Bun, browser bundles).
// llama.cpp's prebuilt libraries are not in the tarball: they come from the @node-llama-cpp/<platform>
// package pinned in scripts/native-packages.json, an optional dependency npm installs on that platform.
// What llamux compiles itself against them (the shim, libmtmd, the RPC back end) is in native/.
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import packageJson from "../package.json" with { type: "json" };
import nativePackages from "./native-packages.json" with { type: "json" };

const root = join(import.meta.dir, "..");
const out = join(root, "dist", "npm");
const staged = join(out, "package");
const lib = join(root, ".native", "lib");
const companions = ["libllamux-shim.so", "libmtmd.so", "libllamux-mtmd.so", "libggml-rpc.so"];

function fail(message: string): never {
  console.error(`package: ${message}`);
  process.exit(1);
}

function run(argv: string[], cwd = root): string {
  const result = Bun.spawnSync(argv, { cwd, stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) fail(`${argv.join(" ")} failed:\n${result.stdout.toString()}${result.stderr.toString()}`);
  return result.stdout.toString();
}

// The companions must have been linked against the very libraries npm will install beside them.
const variant = existsSync(join(lib, "VARIANT")) ? readFileSync(join(lib, "VARIANT"), "utf8").trim() : "";
const prebuilt = (nativePackages.prebuilt as Record<string, Array<{ name: string }>>)[variant];
if (!prebuilt) fail(`.native/lib holds "${variant || "nothing"}", not a prebuilt set of scripts/native-packages.json: run "make" (LLAMUX_GPU=cpu, no llama-from-source) first`);
for (const name of companions) if (!existsSync(join(lib, name))) fail(`.native/lib lacks ${name}: run "make" first`);

/** Where each prebuilt package keeps its libraries, read from the pinned tarball the set-up fetched; its libraries must be .native/lib's. */
function libraryFolder(name: string): string {
  const tarball = join(root, ".native", "packages", `${name.replace("@", "").replace("/", "-")}-${nativePackages.version}.tgz`);
  if (!existsSync(tarball)) fail(`${relative(root, tarball)} is missing: run "make" first`);
  const listing = run(["tar", "tzvf", tarball]).split("\n");
  const libraries = listing.map((line) => /^\S+\s+\S+\s+(\d+)\s+\S+\s+\S+\s+package\/(bins\/[^/]+)\/([^/]+\.so)$/.exec(line)).filter((match) => match !== null);
  if (libraries.length === 0) fail(`${relative(root, tarball)} holds no libraries under bins/`);
  for (const [, size, , file] of libraries) {
    const local = join(lib, file!);
    if (!existsSync(local) || statSync(local).size !== Number(size)) fail(`.native/lib/${file} is not the one in ${name}@${nativePackages.version}: run "make" again`);
  }
  return libraries[0]![2]!;
}
const prebuiltFolders = prebuilt.map(({ name }) => ({ package: name, dir: libraryFolder(name) }));

console.error("package: compiling (tsc -p tsconfig.package.json)");
rmSync(out, { recursive: true, force: true });
run([join(root, "node_modules", ".bin", "tsc"), "-p", "tsconfig.package.json"]);

// Declarations keep the sources' ".ts" specifiers; beside .js files they name the .js modules.
const rewriteSpecifiers = (text: string) => text.replace(/((?:from|import)\s*\(?\s*["'])(\.{1,2}\/[^"']+)\.ts(["'])/g, "$1$2.js$3");
const visit = (dir: string) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) visit(path);
    else if (entry.name.endsWith(".d.ts")) writeFileSync(path, rewriteSpecifiers(readFileSync(path, "utf8")));
  }
};
visit(staged);

const native = join(staged, "native");
mkdirSync(native);
for (const name of [...companions, "VARIANT"]) copyFileSync(join(lib, name), join(native, name));
writeFileSync(join(native, "prebuilt.json"), `${JSON.stringify(prebuiltFolders, null, 2)}\n`);

const manifest = {
  name: packageJson.name,
  version: packageJson.version,
  description: "llamux's SDK: local GGUF models in process on Bun (batch generation, conversations with tool calling), or a Conversation against any OpenAI-compatible server from Node, Bun or a browser",
  license: packageJson.license,
  type: "module",
  exports: {
    ".": { types: "./src/sdk/index.d.ts", bun: "./src/sdk/index.js", default: "./src/sdk/requires-bun.js" },
    "./remote": { types: "./src/sdk/remote.d.ts", default: "./src/sdk/remote.js" },
    "./package.json": "./package.json",
  },
  imports: {
    "#mcp-server": { browser: "./src/sdk/mcp-server-unavailable.js", default: "./src/sdk/mcp-server.js" },
  },
  engines: { node: ">=20" },
  dependencies: packageJson.dependencies,
  optionalDependencies: Object.fromEntries(prebuilt.map(({ name }) => [name, nativePackages.version])),
};
writeFileSync(join(staged, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
writeFileSync(join(staged, "README.md"), `# llamux

The SDK of llamux, which serves local GGUF models through llama.cpp as
Ollama, vLLM and LM Studio do.

- \`import { LLM, SamplingParams, ModelRunner } from "llamux"\`: models in this process, on Bun (bun:ffi),
  with llama.cpp's prebuilt libraries from ${prebuilt.map(({ name }) => `\`${name}\``).join(", ")} (set \`LLAMUX_LIB_DIR\` for others).
- \`import { RemoteModelRunner } from "llamux/remote"\`: the same Conversation API against a running llamux
  (or any OpenAI-compatible server), on Node 20 or later, Bun, or in a browser bundle.

The manual's SDK page is docs/sdk.md in the repository.
`);

const packed = run(["npm", "pack", "--silent", "--pack-destination", out], staged).trim().split("\n").at(-1)!;
console.log(`package: ${relative(root, join(out, packed))} (${(statSync(join(out, packed)).size / 2 ** 20).toFixed(1)} MiB)`);
