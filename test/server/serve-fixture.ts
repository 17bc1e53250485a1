// Starts a real `llamux serve` process on a free loopback port for end-to-end tests, and stops it.
import { createServer } from "node:net";
import { join } from "node:path";

const main = join(import.meta.dir, "..", "..", "src", "main.ts");

export interface RunningServer {
  baseUrl: string;
  port: number;
  /** The server process's id (to read its memory in /proc; its engines are its child processes). */
  pid: number;
  stderr: () => string;
  /** The server process's exit status, once it has exited. */
  exited: Promise<number>;
  /** Resolves once the server's log matches `pattern` (as each chunk arrives); rejects after `timeoutMs`. */
  logged(pattern: RegExp, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/**
 * Runs `llamux serve ARGS --port P` and waits until it answers HTTP. Profile c's LM Studio SDK discovery
 * port (127.0.0.1:41343) stays off unless ARGS set `--sdk-port`, so servers of parallel tests do not race for it.
 */
export async function startServer(args: string[], env: Record<string, string> = {}): Promise<RunningServer> {
  const port = await freePort();
  const sdkPort = args.includes("--sdk-port") ? [] : ["--sdk-port", "0"];
  const child = Bun.spawn([process.execPath, main, "serve", ...args, ...sdkPort, "--port", String(port)], {
    env: { ...process.env, LLAMUX_LOG_LEVEL: "warn", ...env },
    stdout: "ignore",
    stderr: "pipe",
  });
  let stderr = "";
  const listeners = new Set<() => void>();
  void (async () => {
    for await (const chunk of child.stderr) {
      stderr += new TextDecoder().decode(chunk);
      for (const listener of listeners) listener();
    }
  })();
  const logged = (pattern: RegExp, timeoutMs = 10_000) => new Promise<void>((resolve, reject) => {
    const check = () => {
      if (!pattern.test(stderr)) return;
      listeners.delete(check);
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      listeners.delete(check);
      reject(new Error(`the server's log did not show ${pattern} within ${timeoutMs} ms: ${stderr.slice(-2000)}`));
    }, timeoutMs);
    listeners.add(check);
    check();
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await fetch(`${baseUrl}/v1/models`);
      break;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`llamux serve did not start: ${stderr}`);
      await Bun.sleep(50);
    }
  }
  return {
    baseUrl,
    port,
    pid: child.pid,
    stderr: () => stderr,
    exited: child.exited,
    logged,
    async stop() {
      child.kill("SIGTERM");
      await child.exited;
    },
  };
}

/** Polls `path` until it answers 200: profile b's /health does once the model named on the command line has loaded. */
export async function waitUntilReady(server: RunningServer, path = "/health", timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let status = 0;
  while (Date.now() < deadline) {
    status = (await fetch(`${server.baseUrl}${path}`)).status;
    if (status === 200) return;
    await Bun.sleep(25);
  }
  throw new Error(`${server.baseUrl}${path} still answers ${status} after ${timeoutMs / 1000} s: ${server.stderr()}`);
}
