// One MCP client session (the official SDK's Client) with one server: a configured process over stdio,
// or a server at a URL over Streamable HTTP (or the older HTTP+SSE transport). Every request it makes is
// bounded in time; a server that crashes, hangs or answers garbage leaves the session closed and the
// caller a McpFailure to report, never a hung request.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { logger } from "../log.ts";
import { llamuxVersion } from "../version.ts";
import type { McpServerConfig } from "./mcp-config.ts";
import type { McpLimits } from "./mcp-limits.ts";
import { callResultText } from "./call-result.ts";

const log = logger("mcp");

export interface McpToolInfo {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/** Why a request to a server failed, in the shape of OpenAI's McpToolCallError. */
export type McpFailure =
  | { type: "mcp_protocol_error"; code: number; message: string }
  | { type: "mcp_tool_execution_error"; message: string; content: unknown }
  | { type: "http_error"; code: number; message: string };

export type McpCallOutcome =
  | { ok: true; text: string; content: unknown[] }
  | { ok: false; failure: McpFailure };

export type HttpFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface McpSessionOptions {
  limits: McpLimits;
  /** The fetch of HTTP transports (the guarded one for URLs a request names). */
  fetch?: HttpFetch;
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

function transportFor(server: McpServerConfig, options: McpSessionOptions): Transport {
  if (server.kind === "stdio") {
    const transport = new StdioClientTransport({
      command: server.command, args: server.args,
      env: { ...getDefaultEnvironment(), ...server.env },
      ...(server.cwd ? { cwd: server.cwd } : {}),
      stderr: "pipe",
      maxBufferSize: options.limits.maxMessageBytes,
    });
    // The server's own log lines, at debug level (they may echo tool arguments).
    transport.stderr?.on("data", (chunk: Buffer) => log.debug(`${server.name} stderr: ${chunk.toString("utf8").trimEnd().slice(0, 2000)}`));
    return transport;
  }
  const http = {
    requestInit: { headers: server.headers ?? {} },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
  const url = new URL(server.url);
  return server.sse
    ? new SSEClientTransport(url, http)
    : new StreamableHTTPClientTransport(url, { ...http, reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 } });
}

/** What went wrong, as the failure a caller reports; `what` says which request ("list its tools"). */
export function failureOf(error: unknown, server: string, what: string, timeoutMs: number): McpFailure {
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) return { type: "mcp_protocol_error", code: error.code, message: `MCP server "${server}" did not ${what} within ${seconds(timeoutMs)}` };
    if (error.code === ErrorCode.ConnectionClosed) return { type: "mcp_protocol_error", code: error.code, message: `MCP server "${server}" closed the connection (it exited or crashed) before it could ${what}` };
    return { type: "mcp_protocol_error", code: error.code, message: `MCP server "${server}" could not ${what}: ${error.message}` };
  }
  const status = (error as { code?: unknown }).code;
  if (typeof status === "number" && status >= 400 && status < 600) return { type: "http_error", code: status, message: `MCP server "${server}" answered HTTP ${status}: ${(error as Error).message}` };
  const message = error instanceof Error ? error.message : String(error);
  return { type: "mcp_protocol_error", code: ErrorCode.InternalError, message: `MCP server "${server}" could not ${what}: ${message}` };
}

export class McpSession {
  private open = true;
  private readonly closedListeners: Array<() => void> = [];

  private constructor(readonly server: McpServerConfig, private readonly client: Client, private readonly limits: McpLimits) {
    client.onclose = () => {
      if (this.open) log.info(`MCP server "${server.name}" closed its session`);
      this.markClosed();
    };
    // Unreadable messages are dropped by the SDK; the request they answered then times out.
    client.onerror = (error) => log.debug(`MCP server "${server.name}": ${error.message}`);
  }

  /** Spawns or connects to the server and completes the initialize handshake; throws a McpFailure-carrying McpSessionError. */
  static async open(server: McpServerConfig, options: McpSessionOptions): Promise<McpSession> {
    const client = new Client({ name: "llamux", version: llamuxVersion });
    const transport = transportFor(server, options);
    const timeoutMs = options.limits.connectTimeoutMs;
    try {
      await client.connect(transport, { timeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      await client.close().catch(() => {});
      throw new McpSessionError(failureOf(error, server.name, "start its session", timeoutMs), { cause: error });
    }
    log.debug(`MCP session open with "${server.name}"`);
    return new McpSession(server, client, options.limits);
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** The server's tools (every page, at most maxToolsPerServer); throws McpSessionError. */
  async listTools(signal?: AbortSignal): Promise<McpToolInfo[]> {
    const timeoutMs = this.limits.listTimeoutMs;
    const deadline = AbortSignal.timeout(timeoutMs);
    const tools: McpToolInfo[] = [];
    try {
      let cursor: string | undefined;
      do {
        const page = await this.client.listTools(cursor ? { cursor } : {}, { timeout: timeoutMs, signal: signal ? AbortSignal.any([signal, deadline]) : deadline });
        for (const tool of page.tools) {
          if (tools.length >= this.limits.maxToolsPerServer) break;
          tools.push({
            name: tool.name, inputSchema: tool.inputSchema as Record<string, unknown>,
            ...(tool.description ? { description: tool.description } : {}),
            ...(tool.annotations ? { annotations: tool.annotations as Record<string, unknown> } : {}),
          });
        }
        cursor = tools.length < this.limits.maxToolsPerServer ? page.nextCursor : undefined;
      } while (cursor);
    } catch (error) {
      if (deadline.aborted) await this.close();
      throw new McpSessionError(failureOf(deadline.aborted ? new McpError(ErrorCode.RequestTimeout, "timeout") : error, this.server.name, "list its tools", timeoutMs), { cause: error });
    }
    return tools;
  }

  /** Runs one tool; every failure comes back as an outcome. A call that times out closes the session. */
  async callTool(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallOutcome> {
    const timeoutMs = this.limits.callTimeoutMs;
    const deadline = AbortSignal.timeout(timeoutMs);
    let result: CallToolResult;
    try {
      result = await this.client.callTool({ name, arguments: args }, undefined, {
        timeout: timeoutMs, maxTotalTimeout: timeoutMs, signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
      }) as CallToolResult;
    } catch (error) {
      // A server that did not answer in time may never answer: start it afresh next time.
      if (deadline.aborted) await this.close();
      const failure = failureOf(deadline.aborted ? new McpError(ErrorCode.RequestTimeout, "timeout") : error, this.server.name, `run "${name}"`, timeoutMs);
      return { ok: false, failure };
    }
    const content = Array.isArray(result.content) ? result.content : [];
    const text = callResultText(result);
    if (result.isError) return { ok: false, failure: { type: "mcp_tool_execution_error", message: text || `Tool "${name}" failed`, content } };
    return { ok: true, text, content };
  }

  /** Told once, when the session closes (by close(), or by the server going away). */
  onClosed(listener: () => void): void {
    if (this.open) this.closedListeners.push(listener);
    else listener();
  }

  async close(): Promise<void> {
    this.markClosed();
    await this.client.close().catch(() => {});
  }

  private markClosed(): void {
    if (!this.open) return;
    this.open = false;
    for (const listener of this.closedListeners.splice(0)) listener();
  }
}

/** A session that could not start or list its tools. */
export class McpSessionError extends Error {
  constructor(readonly failure: McpFailure, options?: ErrorOptions) {
    super(failure.message, options);
    this.name = "McpSessionError";
  }
}
