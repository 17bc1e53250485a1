// Bundles the web UI's browser code (src/webui) into one ES module. Imported as a Bun macro, so it runs
// when the server module is transpiled (`bun run`) or compiled (`bun build --compile`) and the bundle
// lands in the code as a string: the executable carries the UI and serves it offline. Bun.build cannot
// run inside a macro (the bundler waits on the macro), hence the child `bun build`.
import { join } from "node:path";

export function bundleWebUi(): string {
  const entry = join(import.meta.dir, "..", "..", "webui", "main.ts");
  const result = Bun.spawnSync([process.execPath, "build", entry, "--target=browser", "--format=esm", "--minify"], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, BUN_BE_BUN: "1" },
  });
  if (result.exitCode !== 0) throw new Error(`Cannot bundle the web UI: ${result.stderr.toString()}`);
  return result.stdout.toString();
}
