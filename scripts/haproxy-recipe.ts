// README's HAProxy recipe ("When one machine is not enough"), run as written: the configuration is read
// out of README.md and only the replicas' and the listener's addresses change. test/server/haproxy.test.ts
// and the benchmark of session affinity (scripts/bench/session-affinity.ts) both start it from here.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Debian's haproxy package. */
export const HAPROXY = "/usr/sbin/haproxy";
const README = join(import.meta.dir, "..", "README.md");

export const haproxyInstalled = () => existsSync(HAPROXY);

/** The first ```haproxy block of README.md. */
export function readmeHaproxyConfig(): string {
  const match = /```haproxy\n([\s\S]*?)```/.exec(readFileSync(README, "utf8"));
  if (!match) throw new Error("README.md has no ```haproxy block");
  return match[1]!;
}

/** The recipe pointed at this machine: replica N's address becomes 127.0.0.1:ports[N-1], the listener `port`. */
export function localHaproxyConfig(recipe: string, port: number, replicaPorts: number[]): string {
  let config = recipe.replace(/^(\s*bind )\S+/m, `$1127.0.0.1:${port}`);
  config = config.replace(/^(\s*server replica(\d+) )\S+/gm, (_, head: string, n: string) => `${head}127.0.0.1:${replicaPorts[Number(n) - 1]}`);
  if (config.includes("10.0.0.")) throw new Error("the recipe names a replica this machine does not run (more `server replicaN` lines than ports)");
  return config;
}

/** The recipe without session affinity or least connections: every request to the next replica in turn. */
export const roundRobinConfig = (config: string) => config.replace(/^(\s*)balance .*$/gm, "$1balance roundrobin");

export class Haproxy {
  private constructor(private readonly child: ReturnType<typeof Bun.spawn>, readonly url: string, private readonly dir: string) {}

  /** Checks and starts `config` listening on `port`; resolves once /health answers through it. */
  static async start(config: string, port: number): Promise<Haproxy> {
    const dir = mkdtempSync(join(tmpdir(), "llamux-haproxy-"));
    const file = join(dir, "haproxy.cfg");
    writeFileSync(file, config);
    const check = Bun.spawnSync([HAPROXY, "-c", "-f", file], { stderr: "pipe", stdout: "pipe" });
    if (check.exitCode !== 0) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`haproxy rejects the recipe: ${check.stdout}${check.stderr}`);
    }
    const child = Bun.spawn([HAPROXY, "-db", "-f", file], { stdout: "ignore", stderr: "pipe" });
    const proxy = new Haproxy(child, `http://127.0.0.1:${port}`, dir);
    // up, and a replica seen healthy by the checks
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        if ((await fetch(`${proxy.url}/health`)).ok) return proxy;
      } catch { /* not listening yet */ }
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill("SIGKILL");
        rmSync(dir, { recursive: true, force: true });
        throw new Error(`haproxy did not start: ${await new Response(child.stderr as ReadableStream).text()}`);
      }
      await Bun.sleep(100);
    }
  }

  async stop(): Promise<void> {
    this.child.kill("SIGTERM");
    await this.child.exited;
    rmSync(this.dir, { recursive: true, force: true });
  }
}
