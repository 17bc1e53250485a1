// The release executable (make release): copied alone into an empty directory with a clean environment,
// it reports its version, serves a request, passes doctor; symlinked as ollama, vllm and lms it speaks
// each tool's command line, and serves one request through each tool's client. Built once for the file.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { Ollama } from "ollama";
import { copyFileSync, existsSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import packageJson from "../../package.json" with { type: "json" };
import nativePackages from "../../scripts/native-packages.json" with { type: "json" };
import { ensureModel } from "../../scripts/gen-models.ts";
import { OLLAMA_COMPATIBLE_VERSION } from "../../src/server/ollama/routes.ts";
import { VLLM_COMPATIBLE_VERSION } from "../../src/server/vllm/version.ts";
import { freePort } from "../server/serve-fixture.ts";
import { StandaloneInstall, buildIfStale, root } from "./standalone.ts";

const releaseName = `llamux-${packageJson.version}-linux-${process.arch}`;
const release = join(root, "dist", releaseName);

let install: StandaloneInstall;
let workDir: string;
let programDir: string;
let model: string;

const run = (program: string, args: string[], env: Record<string, string> = {}) => install.run(program, args, env);

/** Starts a long-running command of the copied executable and waits until `url` answers. */
async function startServing(program: string, args: string[], url: string, env: Record<string, string> = {}) {
  const child = install.spawn(program, args, env);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${program} ${args.join(" ")} exited with ${child.exitCode}: ${await new Response(child.stderr).text()}`);
    try {
      await fetch(url);
      return { stop: async () => { child.kill("SIGTERM"); await child.exited; } };
    } catch {
      await Bun.sleep(50);
    }
  }
  child.kill("SIGKILL");
  throw new Error(`${program} ${args.join(" ")} did not answer at ${url}`);
}

// The first build compiles the portable CPU libraries from the pinned source (about 5 minutes on 2 cores).
beforeAll(async () => {
  const libraries = existsSync(join(root, ".native", "lib-portable")) ? [".native/lib-portable"] : [];
  buildIfStale(release, ["src", "ffi", ...libraries, "scripts/build-binary.ts", "scripts/release.ts", "scripts/build-llama-from-source.sh", "package.json"],
    [join(root, "scripts", "release.ts"), "cpu"], "make release");
  install = new StandaloneInstall(release, "llamux-release-");
  ({ workDir, programDir } = install);
  model = join(workDir, "tiny.gguf");
  copyFileSync(await ensureModel("tiny-llama"), model);
}, 1_200_000);

afterAll(() => install.dispose());

describe("release executable", () => {
  test("SHA256SUMS lists it with its checksum", () => {
    const sums = readFileSync(join(root, "dist", "SHA256SUMS"), "utf8");
    const line = sums.split("\n").find((l) => l.endsWith(`  ${releaseName}`));
    expect(line).toBeDefined();
    const actual = new Bun.CryptoHasher("sha256").update(readFileSync(release)).digest("hex");
    expect(line!.split("  ")[0]).toBe(actual);
  });

  test("--version from an empty directory with a clean environment", async () => {
    expect(readdirSync(programDir)).toEqual(["llamux"]);
    const result = await run("llamux", ["--version"]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toStartWith(`llamux ${packageJson.version}\nllama.cpp ${nativePackages.llamaCppRelease} (commit ${nativePackages.llamaCppCommit.slice(0, 7)})\n`);
  }, 60_000);

  test("doctor names the embedded variant (the portable build), the CPU, the store and the ports", async () => {
    const result = await run("llamux", ["doctor"], { LLAMUX_MODELS: join(workDir, "models") });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`native libraries\\s+linux-x64-portable-cpu in .*/\\.cache/llamux/${packageJson.version.replaceAll(".", "\\.")}-[0-9a-f]{16}`));
    expect(result.stdout).toMatch(/CPU features\s+CPU : .*(AVX|SSE)/);
    expect(result.stdout).toMatch(new RegExp(`model store\\s+${join(workDir, "models")}: no models yet`));
    for (const port of [11434, 8000, 1234]) expect(result.stdout).toMatch(new RegExp(`port ${port}\\s+(free|in use)`));
  }, 60_000);

  test("serve answers a plain HTTP request (curl-style) on profile c", async () => {
    const port = await freePort();
    const server = await startServing("llamux", ["serve", "--profile", "c", "--port", String(port), "--ctx-size", "512"], `http://127.0.0.1:${port}/v1/models`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model, prompt: "Once upon a time", max_tokens: 5, temperature: 0, ignore_eos: true }),
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { choices: Array<{ text: string; finish_reason: string }>; usage: { completion_tokens: number } };
      expect(body.usage.completion_tokens).toBe(5);
      expect(body.choices[0]!.finish_reason).toBe("length");
    } finally {
      await server.stop();
    }
  }, 120_000);
});

describe("personalities by name", () => {
  beforeAll(() => {
    for (const name of ["ollama", "vllm", "lms"]) symlinkSync("llamux", join(programDir, name));
  });

  test("each answers --help in its own words", async () => {
    const ollama = await run("ollama", ["--help"]);
    expect(ollama.exitCode).toBe(0);
    expect(ollama.stdout).toContain("Usage:\n  ollama [flags]\n  ollama [command]");
    for (const command of ["serve", "run", "list", "ps", "pull", "show", "rm", "cp", "create", "stop"]) expect(ollama.stdout).toMatch(new RegExp(`^  ${command} `, "m"));
    const vllm = await run("vllm", ["--help"]);
    expect(vllm.exitCode).toBe(0);
    expect(vllm.stdout).toStartWith("usage: vllm");
    const vllmServe = await run("vllm", ["serve", "--help"]);
    expect(vllmServe.stdout).toStartWith("Usage: vllm serve");
    const lms = await run("lms", ["--help"]);
    expect(lms.exitCode).toBe(0);
    expect(lms.stdout).toContain("Usage: lms <command>");
    for (const command of ["server", "ls", "ps", "load", "unload", "get"]) expect(lms.stdout).toMatch(new RegExp(`^  ${command} `, "m"));
    expect((await run("lms", ["server", "--help"])).stdout).toContain("Usage: lms server <start|stop|status>");
    for (const program of ["ollama", "vllm", "lms"]) expect((await run(program, ["--help"])).stdout).not.toContain("Usage: llamux");
  }, 60_000);

  test("version lines as scripts parse them", async () => {
    expect((await run("ollama", ["--version"])).stdout).toBe(`ollama version is ${OLLAMA_COMPATIBLE_VERSION}\n`);
    expect((await run("ollama", ["-v"])).stdout).toBe(`ollama version is ${OLLAMA_COMPATIBLE_VERSION}\n`);
    expect((await run("vllm", ["--version"])).stdout).toBe(`${VLLM_COMPATIBLE_VERSION}\n`);
  }, 60_000);

  test("unknown commands are refused in each tool's manner", async () => {
    const ollama = await run("ollama", ["frobnicate"]);
    expect(ollama.exitCode).toBe(1);
    expect(ollama.stderr).toContain('Error: unknown command "frobnicate" for "ollama"');
    const vllm = await run("vllm", ["frobnicate"]);
    expect(vllm.exitCode).toBe(2);
    expect(vllm.stderr).toContain("vllm: error: argument subparser: invalid choice: 'frobnicate'");
    const lms = await run("lms", ["frobnicate"]);
    expect(lms.exitCode).toBe(2);
    expect(lms.stderr).toContain("unknown command 'frobnicate'");
  }, 60_000);

  test("ollama serve answers the ollama client on OLLAMA_HOST", async () => {
    const port = await freePort();
    const server = await startServing("ollama", ["serve"], `http://127.0.0.1:${port}/`, { OLLAMA_HOST: `127.0.0.1:${port}`, OLLAMA_CONTEXT_LENGTH: "512" });
    try {
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe("Ollama is running");
      const client = new Ollama({ host: `http://127.0.0.1:${port}` });
      const reply = await client.generate({ model, prompt: "Once upon a time", options: { num_predict: 4, temperature: 0 } });
      expect(reply.done).toBe(true);
      expect(reply.eval_count).toBeGreaterThan(0);
      expect(reply.eval_count).toBeLessThanOrEqual(4);

      // The model commands go through the server at OLLAMA_HOST, with Ollama's table headers.
      const env = { OLLAMA_HOST: `127.0.0.1:${port}`, LLAMUX_MODELS: join(workDir, "empty-store") };
      const ps = await run("ollama", ["ps"], env);
      expect(ps.exitCode).toBe(0);
      expect(ps.stdout.split("\n")[0]).toMatch(/^NAME\s+ID\s+SIZE\s+PROCESSOR\s+CONTEXT\s+UNTIL$/);
      expect(ps.stdout).toContain("tiny.gguf");
      const list = await run("ollama", ["list"], env);
      expect(list.exitCode).toBe(0);
      expect(list.stdout).toMatch(/^NAME\s+ID\s+SIZE\s+MODIFIED\s*$/);
    } finally {
      await server.stop();
    }
  }, 120_000);

  test("ollama run MODEL PROMPT streams a one-shot answer, its engine child being the executable", async () => {
    const result = await run("ollama", ["run", model, "Once upon a time", "--max-tokens", "6", "--temperature", "0"]);
    expect(result.stderr).not.toContain("error");
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trim().length).toBeGreaterThan(0);
  }, 120_000);

  test("vllm serve MODEL --port answers the openai client as profile b", async () => {
    const port = await freePort();
    const server = await startServing("vllm", ["serve", model, "--port", String(port), "--served-model-name", "org/tiny", "--max-model-len", "512"], `http://127.0.0.1:${port}/health`);
    try {
      const version = (await (await fetch(`http://127.0.0.1:${port}/version`)).json()) as { version: string };
      expect(version.version).toBe(VLLM_COMPATIBLE_VERSION);
      const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "unused", maxRetries: 0 });
      const completion = await client.chat.completions.create({ model: "org/tiny", messages: [{ role: "user", content: "Hello" }], max_tokens: 4, temperature: 0 });
      expect(completion.model).toBe("org/tiny");
      expect(completion.usage!.completion_tokens).toBeGreaterThan(0);
      expect(completion.usage!.completion_tokens).toBeLessThanOrEqual(4);
    } finally {
      await server.stop();
    }
  }, 120_000);

  test("lms server start runs a background profile-c server that status sees and stop ends", async () => {
    const port = await freePort();
    const env = { LLAMUX_STATE_DIR: join(workDir, "state") };
    expect((await run("lms", ["server", "status"], env)).stdout).toBe("The server is not running.\n");
    const started = await run("lms", ["server", "start", "--port", String(port)], env);
    expect(started.exitCode).toBe(0);
    expect(started.stdout).toContain(`Server is now running on port ${port}`);
    try {
      expect((await run("lms", ["server", "status", "--json"], env)).stdout).toBe(`{"running":true,"port":${port}}\n`);
      const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "lm-studio", maxRetries: 0 });
      const completion = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Hello" }], max_tokens: 3, temperature: 0 });
      expect(completion.usage!.completion_tokens).toBeGreaterThan(0);
    } finally {
      const stopped = await run("lms", ["server", "stop"], env);
      expect(stopped.stdout).toBe(`Stopped the server on port ${port}.\n`);
    }
    expect((await run("lms", ["server", "status"], env)).stdout).toBe("The server is not running.\n");
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
    // A later start without --port reuses the last one, as lms does.
    const record = JSON.parse(readFileSync(join(workDir, "state", "lms-last-port"), "utf8")) as number;
    expect(record).toBe(port);
  }, 120_000);
});
