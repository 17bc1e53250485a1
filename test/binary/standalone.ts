// An executable copied alone into an empty directory and run with nothing but PATH=/usr/bin:/bin and
// HOME in its environment: no Bun, no node_modules, no checkout. Shared by the binary and release tests.
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const root = join(import.meta.dir, "..", "..");

export interface Result { exitCode: number; stdout: string; stderr: string }

/**
 * Builds `output` with the script when it is missing or older than any file under `sources` (repo paths).
 * The build's own output (a compile of llama.cpp prints thousands of warning lines) is kept out of the
 * test log and shown, its end, only when the build fails.
 */
export function buildIfStale(output: string, sources: string[], buildArgs: string[], what: string): void {
  if (existsSync(output) && statSync(output).mtimeMs >= newestModification(sources)) return;
  console.error(`${what}: building ${output}`);
  const started = performance.now();
  const build = Bun.spawnSync([process.execPath, ...buildArgs], { cwd: root, stdout: "pipe", stderr: "pipe" });
  const log = `${build.stdout.toString()}${build.stderr.toString()}`;
  if (build.exitCode !== 0) throw new Error(`${what} failed with exit code ${build.exitCode}:\n${log.slice(-6000)}`);
  console.error(`${what}: built in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

function newestModification(paths: string[]): number {
  let newest = 0;
  const visit = (path: string) => {
    const stat = statSync(path);
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const path of paths) visit(join(root, path));
  return newest;
}

export class StandaloneInstall {
  /** A temporary directory holding program/ (the executable alone) and home/. */
  readonly workDir: string;
  readonly programDir: string;

  constructor(executable: string, prefix: string) {
    this.workDir = mkdtempSync(join(tmpdir(), prefix));
    this.programDir = join(this.workDir, "program");
    mkdirSync(this.programDir);
    mkdirSync(join(this.workDir, "home"));
    copyFileSync(executable, join(this.programDir, "llamux"));
    chmodSync(join(this.programDir, "llamux"), 0o755);
  }

  /** The clean environment, plus `env`. */
  env(env: Record<string, string> = {}): Record<string, string> {
    return { PATH: "/usr/bin:/bin", HOME: join(this.workDir, "home"), ...env };
  }

  /** Starts `program` (the executable or a link to it in program/). */
  spawn(program: string, args: string[], env: Record<string, string> = {}) {
    return Bun.spawn([`./${program}`, ...args], { cwd: this.programDir, env: this.env(env), stdout: "pipe", stderr: "pipe" });
  }

  /** Runs `program` to its end. */
  async run(program: string, args: string[], env: Record<string, string> = {}): Promise<Result> {
    const child = this.spawn(program, args, env);
    const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    return { exitCode, stdout, stderr };
  }

  dispose(): void {
    rmSync(this.workDir, { recursive: true, force: true });
  }
}
