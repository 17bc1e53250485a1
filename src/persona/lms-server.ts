// The background server behind `lms server start|stop|status`: a detached `llamux serve --profile c`
// whose pid, address and log file are recorded in a state file, so later `lms` invocations find it.
// Like lms, a start without --port reuses the last port (falling back to 1234).
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { llamuxCommand } from "../binary/self.ts";

export const LMS_DEFAULT_PORT = 1234;

export interface ServerRecord {
  pid: number;
  host: string;
  port: number;
  log: string;
  startedAt: string;
}

/** $LLAMUX_STATE_DIR, else $XDG_STATE_HOME/llamux, else ~/.local/state/llamux. */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LLAMUX_STATE_DIR) return env.LLAMUX_STATE_DIR;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, "llamux");
  return join(env.HOME || homedir(), ".local", "state", "llamux");
}

const recordPath = () => join(stateDir(), "lms-server.json");
const lastPortPath = () => join(stateDir(), "lms-last-port");

function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as T;
  } catch {
    return undefined;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The address a client dials for a server bound to `host` (a wildcard bind is reached on loopback). */
export function dialHost(host: string): string {
  if (host === "0.0.0.0" || host === "::" || host === "") return "127.0.0.1";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** Whether something answers HTTP at host:port (any status counts). */
export async function answers(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  try {
    await fetch(`http://${dialHost(host)}:${port}/`, { signal: AbortSignal.timeout(timeoutMs) });
    return true;
  } catch {
    return false;
  }
}

/** The recorded server if its process still runs; a stale record is removed. */
export function runningServer(): ServerRecord | undefined {
  const record = readJson<ServerRecord>(recordPath());
  if (!record) return undefined;
  if (processAlive(record.pid)) return record;
  rmSync(recordPath(), { force: true });
  return undefined;
}

export function lastPort(): number {
  const text = existsSync(lastPortPath()) ? readFileSync(lastPortPath(), "utf8").trim() : "";
  const port = Number(text);
  return Number.isInteger(port) && port > 0 && port < 65536 ? port : LMS_DEFAULT_PORT;
}

export interface StartOptions {
  host: string;
  port: number;
  cors: boolean;
  /** How long to wait for the server to answer. */
  waitMs?: number;
}

/** Starts `llamux serve --profile c` detached and waits until it answers; throws with its log on failure. */
export async function startServer(options: StartOptions): Promise<ServerRecord> {
  // Something else answering there would pass for the new server while the new one fails to bind.
  if (await answers(options.host, options.port, 500)) throw new Error(`port ${options.port} is in use by another server (choose one with --port)`);
  mkdirSync(stateDir(), { recursive: true });
  const log = join(stateDir(), "lms-server.log");
  const fd = openSync(log, "a");
  const args = ["serve", "--profile", "c", "--host", options.host, "--port", String(options.port), ...(options.cors ? ["--cors-origins", "*"] : [])];
  const [program, ...programArgs] = llamuxCommand();
  const child = spawn(program!, [...programArgs, ...args], {
    detached: true,
    stdio: ["ignore", fd, fd],
    // The server is llamux itself, whatever name this process was started as.
    env: { ...process.env, LLAMUX_PERSONA: "llamux" },
  });
  closeSync(fd);
  let exited: number | null | undefined;
  child.once("exit", (code) => (exited = code));
  child.unref();
  const record: ServerRecord = { pid: child.pid!, host: options.host, port: options.port, log, startedAt: new Date().toISOString() };

  const deadline = Date.now() + (options.waitMs ?? 30_000);
  while (Date.now() < deadline) {
    if (exited !== undefined) throw new Error(`the server exited (code ${exited}) before it answered:\n${logTail(log)}`);
    if (await answers(options.host, options.port, 500)) {
      writeFileSync(recordPath(), JSON.stringify(record, null, 2) + "\n");
      writeFileSync(lastPortPath(), `${options.port}\n`);
      return record;
    }
    await Bun.sleep(100);
  }
  process.kill(record.pid, "SIGTERM");
  throw new Error(`the server did not answer on port ${options.port} within ${Math.round((options.waitMs ?? 30_000) / 1000)} s:\n${logTail(log)}`);
}

/** Stops the recorded server (SIGTERM, then SIGKILL after 10 s) and forgets it. */
export async function stopServer(record: ServerRecord): Promise<void> {
  try {
    process.kill(record.pid, "SIGTERM");
  } catch {
    // already gone
  }
  const deadline = Date.now() + 10_000;
  while (processAlive(record.pid) && Date.now() < deadline) await Bun.sleep(50);
  if (processAlive(record.pid)) process.kill(record.pid, "SIGKILL");
  rmSync(recordPath(), { force: true });
}

function logTail(path: string, lines = 15): string {
  try {
    return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}
