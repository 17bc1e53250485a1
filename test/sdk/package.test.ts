// The npm package (make package), installed as a user installs it: `npm install` of the tarball into fresh
// projects, its dependencies from the npm registry. Under Node, "llamux/remote" holds a conversation with
// a forced tool call against a running llamux; under Bun, "llamux" runs the batch example in process on
// llama.cpp's libraries from the @node-llama-cpp package npm installed, not from this checkout.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import packageJson from "../../package.json" with { type: "json" };
import { ensureModel } from "../../scripts/gen-models.ts";
import { buildIfStale, root } from "../binary/standalone.ts";
import { startServer, type RunningServer } from "../server/serve-fixture.ts";

const tarball = join(root, "dist", "npm", `llamux-${packageJson.version}.tgz`);
const pinnedNode = join(root, "node_modules", ".bin", "node");
const projects: string[] = [];
let model: string;

interface Run { stdout: string; stderr: string; exitCode: number }

async function run(argv: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  const child = Bun.spawn(argv, { cwd, env: { PATH: process.env.PATH!, HOME: join(cwd, "home"), ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, exitCode };
}

/** A new project with nothing but the tarball installed (and what npm installs with it). */
async function freshProject(prefix: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  projects.push(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "uses-llamux", private: true, type: "module" }));
  // npm's cache stays the user's, so the registry is asked once per package version.
  const installed = await run(["npm", "install", "--no-audit", "--no-fund", tarball], dir, { HOME: process.env.HOME! });
  if (installed.exitCode !== 0) throw new Error(`npm install failed:\n${installed.stdout}${installed.stderr}`);
  return dir;
}

const events = (stdout: string) => stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);

beforeAll(async () => {
  buildIfStale(tarball, ["src", "ffi", ".native/lib", "scripts/package.ts", "scripts/native-packages.json", "tsconfig.package.json", "package.json"],
    [join(root, "scripts", "package.ts")], "make package");
  model = await ensureModel("tiny-lfm2");
}, 600_000);

afterAll(() => {
  for (const dir of projects) rmSync(dir, { recursive: true, force: true });
});

test("the tarball holds JavaScript, types and llamux's own libraries, and names the prebuilt ones as dependencies", () => {
  const listing = Bun.spawnSync(["tar", "tzf", tarball]).stdout.toString().split("\n");
  for (const file of ["src/sdk/index.js", "src/sdk/index.d.ts", "src/sdk/remote.js", "src/sdk/remote.d.ts", "src/engine/engine-worker.js", "native/libllamux-shim.so", "native/prebuilt.json"]) {
    expect(listing).toContain(`package/${file}`);
  }
  expect(listing.filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))).toEqual([]);
  expect(listing.some((file) => /libllama\.|libggml-base/.test(file))).toBe(false);
  const manifest = JSON.parse(Bun.spawnSync(["tar", "xzOf", tarball, "package/package.json"]).stdout.toString());
  expect(manifest.optionalDependencies).toEqual({ "@node-llama-cpp/linux-x64": "3.22.1" });
  expect(manifest.private).toBeUndefined();
  expect(Object.keys(manifest.exports)).toEqual([".", "./remote", "./package.json"]);
});

describe("under Node, llamux/remote", () => {
  let project: string;
  let server: RunningServer;

  beforeAll(async () => {
    project = await freshProject("llamux-npm-node-");
    copyFileSync(join(import.meta.dir, "package-fixture", "remote-tools.mjs"), join(project, "remote-tools.mjs"));
    server = await startServer([model, "--profile", "b", "--served-model-name", "tiny", "--max-model-len", "512", "--api-key", "secret"]);
  }, 600_000);

  afterAll(async () => {
    await server?.stop();
  });

  const expectToolConversation = (result: Run, nodeVersion: string) => {
    expect(result.stderr).not.toMatch(/Error|error/);
    expect(result.exitCode).toBe(0);
    const [complete, call, reply, node] = events(result.stdout);
    expect(complete).toEqual({ event: "complete", finishReason: "tool_calls", promptTokens: expect.any(Number) });
    expect(call).toEqual({ event: "call", name: "get_weather", arguments: { city: expect.stringMatching(/^(Paris|London|Tokyo)$/) }, problems: [] });
    expect(reply).toEqual({ event: "reply", finishReason: expect.stringMatching(/^(stop|length)$/), roles: ["system", "user", "assistant", "tool", "assistant"] });
    expect(node).toEqual({ event: "node", version: nodeVersion });
  };

  test("holds a conversation with a forced tool call against a running llamux, on the pinned Node", async () => {
    const version = (await run([pinnedNode, "--version"], project)).stdout.trim().slice(1);
    expectToolConversation(await run([pinnedNode, "remote-tools.mjs"], project, { LLAMUX_URL: server.baseUrl }), version);
  }, 120_000);

  test("does the same on the system's Node when that is Node 20, the oldest the package declares", async () => {
    const systemNode = Bun.which("node");
    const version = systemNode ? (await run([systemNode, "--version"], project)).stdout.trim().slice(1) : "";
    if (!version.startsWith("20.")) return; // covered by the pinned Node above
    expectToolConversation(await run([systemNode!, "remote-tools.mjs"], project, { LLAMUX_URL: server.baseUrl }), version);
  }, 120_000);

  test('import "llamux" under Node says that the in-process part needs Bun and names llamux/remote', async () => {
    const result = await run([pinnedNode, "--input-type=module", "-e", 'await import("llamux")'], project);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('The in-process llamux SDK ("llamux") runs on Bun');
    expect(result.stderr).toContain('import "llamux/remote"');
  });

  test("bundles for the browser with none of Node's modules (registering an MCP server is refused there)", async () => {
    writeFileSync(join(project, "page.js"), 'import { RemoteModelRunner } from "llamux/remote";\nexport const runner = new RemoteModelRunner({ baseURL: "http://127.0.0.1:8000/v1", model: "m", dangerouslyAllowBrowser: true });\n');
    const built = await run([process.execPath, "build", "page.js", "--target=browser", "--outdir", "bundle"], project);
    expect(built.stderr).toBe("");
    expect(built.exitCode).toBe(0);
    const bundle = readFileSync(join(project, "bundle", "page.js"), "utf8");
    // Module statements only: openai's messages mention import('node:buffer') in a string.
    expect(bundle.match(/^\s*import\b[^;]*?from\s*["']node:[^"']*["']|\b(?:__)?require\(\s*["']node:[^"']*["']\)/gm) ?? []).toEqual([]);
    expect(bundle).toContain("MCP servers run under Node or Bun, not in a browser");
  });

  test("its types check in a TypeScript project (strict, nodenext), both entries", async () => {
    writeFileSync(join(project, "check.ts"), `import { Complete, FunctionCalls, LeapFunction, LeapStr, RemoteModelRunner, type GenerationOptionsInit } from "llamux/remote";
import { LLM, SamplingParams } from "llamux";
const runner = new RemoteModelRunner({ baseURL: "http://127.0.0.1:8000/v1", model: "m" });
const options: GenerationOptionsInit = { toolChoice: "required", maxTokens: 10 };
const conversation = runner.createConversation("s");
conversation.registerFunction(new LeapFunction({ name: "f", description: "d", parameters: [{ name: "a", type: new LeapStr(), description: "x" }] }));
export async function main(): Promise<string> {
  for await (const response of conversation.generateResponse("hi", options)) {
    if (response instanceof FunctionCalls) return response.functionCalls[0]!.name;
    if (response instanceof Complete) return response.finishReason;
  }
  const outputs = await new LLM({ model: "x.gguf" }).generate(["a"], new SamplingParams({ max_tokens: 2 }));
  // @ts-expect-error a completion's text is a string: the types are real, not any
  const wrong: number = outputs[0]!.outputs[0]!.text;
  return String(wrong);
}
`);
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify({
      compilerOptions: { strict: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", noEmit: true, skipLibCheck: true, types: [] },
      files: ["check.ts"],
    }));
    const checked = await run([join(root, "node_modules", ".bin", "tsc"), "-p", "."], project);
    expect(checked.stdout + checked.stderr).toBe("");
    expect(checked.exitCode).toBe(0);
  }, 120_000);
});

describe("under Bun, llamux", () => {
  test("runs examples/batch.ts in process on the libraries of @node-llama-cpp/linux-x64 that npm installed", async () => {
    const project = await freshProject("llamux-npm-bun-");
    copyFileSync(join(root, "examples", "batch.ts"), join(project, "batch.ts"));
    const result = await run([process.execPath, "batch.ts", model], project, { LLAMUX_LOG_LEVEL: "warn" });
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines.map((line) => line.split(" -> ")[0])).toEqual(["Name a colour.", "Name a fruit.", "Name a planet."]);
    for (const line of lines) expect(line).toMatch(/ -> ".*" \(\d+ tokens, (stop|length)\)$/);
    expect(result.stderr).toContain("Processed prompts: 100%");

    // The library directory it loaded links the project's own packages: the prebuilt set and llamux's native/.
    const native = join(project, "node_modules", "llamux", "native");
    const linked = readdirSync(native).filter((name) => name.startsWith("linked-"));
    expect(linked).toHaveLength(1);
    const libllama = readdirSync(join(native, linked[0]!)).find((name) => /^libllama\.v[\d.]+\.so$/.test(name))!;
    expect(readlinkSync(join(native, linked[0]!, libllama))).toBe(join(project, "node_modules", "@node-llama-cpp", "linux-x64", "bins", "linux-x64", libllama));
    expect(readlinkSync(join(native, linked[0]!, "libllamux-shim.so"))).toBe(join(native, "libllamux-shim.so"));
  }, 600_000);
});
