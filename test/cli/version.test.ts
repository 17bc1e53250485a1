// `llamux --version` names llama.cpp's release and the commit of its pinned source, and what the loaded
// libraries say they were built from; the pin is the commit the set-up cloned.
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import nativePackages from "../../scripts/native-packages.json" with { type: "json" };
import packageJson from "../../package.json" with { type: "json" };
import { llamux } from "./cli-fixture.ts";

const sourceDir = join(import.meta.dir, "..", "..", ".native", "llama.cpp");

test("--version prints llamux's version, llama.cpp's release and commit, then the libraries' build", async () => {
  const { stdout, exitCode } = await llamux(["--version"]);
  expect(exitCode).toBe(0);
  const lines = stdout.split("\n");
  expect(lines[0]).toBe(`llamux ${packageJson.version}`);
  expect(lines[1]).toBe(`llama.cpp ${nativePackages.llamaCppRelease} (commit ${nativePackages.llamaCppCommit.slice(0, 7)})`);
  expect(lines[2]).toMatch(/^libraries: ggml \d+\.\d+\.\d+, built from commit [0-9a-f]{7,40}$/);
  expect(lines[3]).toStartWith("system: CPU : ");
  expect((await llamux(["version"])).stdout).toBe(stdout);
});

test("the pinned commit is the one the source bundle was cloned at", () => {
  expect(nativePackages.llamaCppCommit).toMatch(/^[0-9a-f]{40}$/);
  if (!existsSync(join(sourceDir, ".git"))) return; // no set-up here: scripts/fetch-native.sh checks at clone time
  const head = Bun.spawnSync(["git", "-C", sourceDir, "rev-parse", "HEAD"]).stdout.toString().trim();
  expect(head).toBe(nativePackages.llamaCppCommit);
});
