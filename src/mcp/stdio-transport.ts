// The stdio transport of configured MCP servers, in place of the SDK's StdioClientTransport (which reads
// every line it is sent): one JSON-RPC message a line, at most `maxLineBytes` a line (a longer one is
// reported as McpMessageTooLargeError and ends the session, never as a crash); notifications beyond a
// rate are dropped before they are parsed; and close() follows MCP's lifecycle for stdio: end stdin, then
// SIGTERM after a grace period, then SIGKILL after another.
import { spawn, type ChildProcess } from "node:child_process";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { McpMessageTooLargeError } from "./message-too-large.ts";
import { NotificationBudget } from "./notification-budget.ts";

export interface StdioTransportOptions {
  /** The server's name in mcp.json, for messages. */
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  maxLineBytes: number;
  notificationsPerSecond: number;
  /** How long close() waits after stdin's end, and again after SIGTERM. */
  closeGraceMs: number;
  onStderr?: (chunk: Buffer) => void;
  /** Told once when notifications start being dropped. */
  onDropping?: () => void;
  onTooLarge?: (error: McpMessageTooLargeError) => void;
}

const NEWLINE = 0x0a;
const ID_KEY = Buffer.from('"id"');

export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child?: ChildProcess;
  private exited?: Promise<void>;
  /** The start of a line whose end has not arrived yet. */
  private readonly partial: Buffer[] = [];
  private partialBytes = 0;
  private readonly budget: NotificationBudget;

  constructor(private readonly options: StdioTransportOptions) {
    this.budget = new NotificationBudget(options.notificationsPerSecond);
  }

  /** Notifications dropped over the rate. */
  get droppedNotifications(): number {
    return this.budget.dropped;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    if (this.child) throw new Error(`MCP server "${this.options.name}" is already started`);
    const { command, args, env, cwd } = this.options;
    const child = spawn(command, args, { env, ...(cwd ? { cwd } : {}), stdio: ["pipe", "pipe", "pipe"], shell: false });
    this.child = child;
    // close() waits for the process to exit; the session ends once its output has been read too.
    this.exited = new Promise((resolve) => child.once("exit", () => resolve()));
    child.once("close", () => {
      if (this.child === child) this.child = undefined;
      this.onclose?.();
    });
    child.stdout!.on("data", (chunk: Buffer) => this.read(chunk));
    child.stderr!.on("data", (chunk: Buffer) => this.options.onStderr?.(chunk));
    child.stdin!.on("error", (error) => this.onerror?.(error));
    child.stdout!.on("error", (error) => this.onerror?.(error));
    return new Promise((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", (error) => {
        reject(error);
        this.onerror?.(error);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.writableEnded) return Promise.reject(new Error(`MCP server "${this.options.name}" is not connected`));
    return new Promise((resolve) => {
      if (stdin.write(`${JSON.stringify(message)}\n`)) resolve();
      else stdin.once("drain", () => resolve());
    });
  }

  /** Ends stdin; SIGTERM when the server has not exited within the grace period; SIGKILL after another. */
  async close(): Promise<void> {
    const child = this.child;
    const exited = this.exited;
    this.partial.length = 0;
    this.partialBytes = 0;
    // Not started, never spawned, or exited already.
    if (!child || !exited || child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    child.stdout!.removeAllListeners("data");
    const waited = () => new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), this.options.closeGraceMs);
      void exited.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    child.stdin!.end();
    if (await waited()) return;
    child.kill("SIGTERM");
    if (await waited()) return;
    child.kill("SIGKILL");
    await exited;
  }

  private read(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      if (this.partialBytes + end - start > this.options.maxLineBytes) return this.tooLarge();
      const line = this.partial.length ? Buffer.concat([...this.partial.splice(0), chunk.subarray(start, end)]) : chunk.subarray(start, end);
      this.partialBytes = 0;
      start = end + 1;
      this.handle(line);
    }
    if (this.partialBytes + chunk.length - start > this.options.maxLineBytes) return this.tooLarge();
    if (start < chunk.length) {
      this.partial.push(chunk.subarray(start));
      this.partialBytes += chunk.length - start;
    }
  }

  private handle(line: Buffer): void {
    // Requests and responses carry an "id"; a line without one is a notification (or garbage), dropped
    // unparsed when over the rate. One that has "id" only inside its params is counted once parsed.
    const unparsedNotification = line.indexOf(ID_KEY) === -1;
    if (unparsedNotification && !this.allowNotification()) return;
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(line.toString("utf8")));
    } catch (error) {
      this.onerror?.(error as Error);
      return;
    }
    if (!unparsedNotification && !("id" in message) && !this.allowNotification()) return;
    this.onmessage?.(message);
  }

  private allowNotification(): boolean {
    if (this.budget.take()) return true;
    if (this.budget.dropped === 1) this.options.onDropping?.();
    return false;
  }

  private tooLarge(): void {
    this.partial.length = 0;
    this.partialBytes = 0;
    this.child?.stdout!.removeAllListeners("data");
    this.options.onTooLarge?.(new McpMessageTooLargeError(`MCP server "${this.options.name}"`, this.options.maxLineBytes));
    void this.close();
  }
}
