// The single executable (make binary): copied alone into an empty directory and started with a clean
// environment (no Bun, no node_modules, no checkout), it extracts its libraries and runs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, readdirSync, truncateSync } from "node:fs";
import { join } from "node:path";
import packageJson from "../../package.json" with { type: "json" };
import nativePackages from "../../scripts/native-packages.json" with { type: "json" };
import { ensureModel } from "../../scripts/gen-models.ts";
import { type Result, StandaloneInstall, buildIfStale, root } from "./standalone.ts";

const binary = join(root, "dist", "llamux");
let install: StandaloneInstall;
let workDir: string;
let programDir: string;

/** Runs the copied executable with nothing but PATH=/usr/bin:/bin and HOME in its environment. */
const llamux = (args: string[], env: Record<string, string> = {}) => install.run("llamux", args, env);

beforeAll(() => {
  buildIfStale(binary, ["src", "ffi", ".native/lib", "scripts/build-binary.ts", "scripts/native-packages.json", "package.json", "package-lock.json"],
    [join(root, "scripts", "build-binary.ts")], "make binary");
  install = new StandaloneInstall(binary, "llamux-binary-");
  ({ workDir, programDir } = install);
}, 600_000);

afterAll(() => install.dispose());

function expectVersionReport(result: Result): void {
  expect(result.exitCode).toBe(0);
  expect(result.stdout).toContain(`llamux ${packageJson.version}\n`);
  expect(result.stdout).toContain(`llama.cpp ${nativePackages.llamaCppRelease} (commit ${nativePackages.llamaCppCommit.slice(0, 7)})\n`);
  expect(result.stdout).toMatch(/^libraries: ggml \S+, built from commit [0-9a-f]{7,}$/m);
  expect(result.stdout).toMatch(/^system: CPU : .*(AVX|SSE|NEON)/m);
  expect(result.stdout).toContain("running on CPU");
}

describe("llamux executable", () => {
  test("--version works copied alone into an empty directory with a clean environment", async () => {
    expect(readdirSync(programDir)).toEqual(["llamux"]);
    const first = await llamux(["--version"]);
    expectVersionReport(first);
    expect(first.stderr).toBe("");

    // Extracted once into ~/.cache/llamux/<version>-<hash>, with the one library nothing needs left out.
    const cache = join(workDir, "home", ".cache", "llamux");
    const [versionDir, ...others] = readdirSync(cache);
    expect(others).toEqual([]);
    expect(versionDir).toMatch(new RegExp(`^${packageJson.version.replaceAll(".", "\\.")}-[0-9a-f]{16}$`));
    const libraries = readdirSync(join(cache, versionDir!));
    expect(libraries).toContain("libllamux-shim.so");
    expect(libraries).toContain("libmtmd.so");
    expect(libraries.some((name) => name.startsWith("libllama.") && name.endsWith(".so"))).toBe(true);
    expect(libraries).not.toContain("libllama-common.so");

    // The second start reuses the extracted copy; `version` is the same report.
    expectVersionReport(await llamux(["version"]));
    expect(readdirSync(cache)).toEqual([versionDir!]);
  }, 120_000);

  test("concurrent first starts with a fresh cache both succeed and leave one complete copy", async () => {
    const cache = join(workDir, "concurrent-cache");
    const results = await Promise.all([1, 2, 3].map(() => llamux(["--version"], { LLAMUX_CACHE_DIR: cache, LLAMUX_LOG_LEVEL: "debug" })));
    for (const result of results) expectVersionReport(result);
    // Only one rename can publish the directory; the others used it, either after losing the race or
    // because it was already there when they looked.
    const extracted = results.filter((result) => /extracted \d+ libraries/.test(result.stderr));
    expect(extracted).toHaveLength(1);
    const entries = readdirSync(cache);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatch(/^\d+\.\d+\.\d+.*-[0-9a-f]{16}$/);
  }, 120_000);

  test("a damaged extracted copy stops start-up with a message saying what to delete", async () => {
    const cache = join(workDir, "damaged-cache");
    expect((await llamux(["--version"], { LLAMUX_CACHE_DIR: cache })).exitCode).toBe(0);
    const versionDir = join(cache, readdirSync(cache)[0]!);
    truncateSync(join(versionDir, "libllamux-shim.so"), 10);
    const result = await llamux(["--version"], { LLAMUX_CACHE_DIR: cache });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("libllamux-shim.so has 10 bytes");
    expect(result.stderr).toContain(versionDir);
  }, 120_000);

  test("--help lists the commands and every command has its own --help", async () => {
    const help = await llamux(["--help"]);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain("Usage: llamux");
    for (const command of ["run", "version", "help"]) {
      expect(help.stdout).toMatch(new RegExp(`^  ${command} `, "m"));
      const own = await llamux([command, "--help"]);
      expect(own.exitCode).toBe(0);
      expect(own.stdout).toStartWith(`Usage: llamux ${command}`);
    }
    expect(help.stdout).not.toContain("__engine");
  }, 120_000);

  test("an unknown command is a usage error: message, help, exit code 2", async () => {
    const result = await llamux(["frobnicate"]);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain('unknown command "frobnicate"');
    expect(result.stderr).toContain("Usage: llamux");
    const badFlag = await llamux(["--frobnicate"]);
    expect(badFlag.exitCode).toBe(2);
    expect(badFlag.stderr).toContain('unknown option "--frobnicate"');
  }, 120_000);

  test("run streams a completion from a model, its engine child being the executable itself", async () => {
    const model = join(workDir, "model.gguf");
    copyFileSync(await ensureModel("tiny-llama"), model);
    const result = await llamux(["run", model, "Once upon a time", "--max-tokens", "12", "--temperature", "0", "--verbose"]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trim().length).toBeGreaterThan(0);
    // --verbose prints Ollama's timing block; 12 tokens means generation ran to --max-tokens.
    expect(result.stderr).toMatch(/^eval count:\s+12 token\(s\)$/m);
  }, 120_000);

  test("run names the file when a model cannot be loaded", async () => {
    const result = await llamux(["run", join(workDir, "missing.gguf"), "hi"]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(join(workDir, "missing.gguf"));
  }, 120_000);
});
