// Runs `bun src/main.ts ...` for CLI tests, with a store of its own and no server unless one is named.
import { join } from "node:path";

export const mainScript = join(import.meta.dir, "..", "..", "src", "main.ts");

/** A port nothing listens on, so commands work directly on the store. */
export const NO_SERVER = "127.0.0.1:9";

export interface CliResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export async function llamux(args: string[], env: Record<string, string> = {}, options: { cwd?: string; stdin?: string } = {}): Promise<CliResult> {
  const child = Bun.spawn([process.execPath, mainScript, ...args], {
    env: { ...process.env, LLAMUX_HOST: NO_SERVER, LLAMUX_LOG_LEVEL: "warn", ...env },
    stdin: options.stdin !== undefined ? new TextEncoder().encode(options.stdin) : "ignore",
    stdout: "pipe",
    stderr: "pipe",
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, exitCode };
}
