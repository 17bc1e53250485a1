// One MCP client session (the official SDK's Client) with one server: a configured process over stdio,
// or a server at a URL over Streamable HTTP (or the older HTTP+SSE transport). Every request it makes is
// bounded in time; a server that crashes, hangs or answers garbage leaves the session closed and the
// caller a McpFailure to report, never a hung request.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { logEnabled, logger } from "../log.ts";
import { llamuxVersion } from "../version.ts";
import type { McpServerConfig } from "./mcp-config.ts";
import type { McpLimits } from "./mcp-limits.ts";
import { callResultText } from "./call-result.ts";
import { cappedFetch, guardedFetch, type McpUrlPolicy } from "./guarded-fetch.ts";
import { McpMessageTooLargeError } from "./message-too-large.ts";
import { StdioTransport } from "./stdio-transport.ts";

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

export interface McpSessionOptions {
  limits: McpLimits;
  /** The guard a URL a request names passes, with every redirect; servers of mcp.json get the size bound alone. */
  urlGuard?: Pick<McpUrlPolicy, "allowPrivate" | "isBlocked" | "maxRedirects">;
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/** A server's own words in a message: a bounded excerpt. */
const excerpt = (text: string) => (text.length > 1000 ? `${text.slice(0, 1000)}…` : text);

/** The session's link to its transport: a message over the bound trips it, which fails what is waiting. */
interface Tripwire {
  signal: AbortSignal;
  trip(error: McpMessageTooLargeError): void;
}

function tripwire(): Tripwire {
  const controller = new AbortController();
  return { signal: controller.signal, trip: (error) => controller.abort(error) };
}

function transportFor(server: McpServerConfig, options: McpSessionOptions, wire: Tripwire): Transport {
  const { limits } = options;
  if (server.kind === "stdio") {
    return new StdioTransport({
      name: server.name, command: server.command, args: server.args,
      env: { ...getDefaultEnvironment(), ...server.env },
      ...(server.cwd ? { cwd: server.cwd } : {}),
      maxLineBytes: limits.maxMessageBytes,
      notificationsPerSecond: limits.notificationsPerSecond,
      closeGraceMs: limits.closeGraceMs,
      // The server's own log lines, at debug level (they may echo tool arguments).
      onStderr: (chunk) => {
        if (logEnabled("debug")) log.debug(`${server.name} stderr: ${chunk.toString("utf8", 0, 2000).trimEnd()}`);
      },
      onDropping: () => log.warn(`MCP server "${server.name}" sends more than ${limits.notificationsPerSecond} notifications a second: the rest are dropped`),
      onTooLarge: wire.trip,
    });
  }
  const bound = { maxBodyBytes: limits.maxMessageBytes, onTooLarge: wire.trip };
  const http = {
    requestInit: { headers: server.headers ?? {} },
    fetch: options.urlGuard ? guardedFetch({ ...options.urlGuard, ...bound }) : cappedFetch(bound),
  };
  const url = new URL(server.url);
  return server.sse
    ? new SSEClientTransport(url, http)
    : new StreamableHTTPClientTransport(url, { ...http, reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 } });
}

/** What went wrong, as the failure a caller reports; `what` says which request ("list its tools"). */
export function failureOf(error: unknown, server: string, what: string, timeoutMs: number): McpFailure {
  if (error instanceof McpMessageTooLargeError) {
    return { type: "mcp_protocol_error", code: ErrorCode.InternalError, message: `MCP server "${server}" could not ${what}: it ${error.what}` };
  }
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) return { type: "mcp_protocol_error", code: error.code, message: `MCP server "${server}" did not ${what} within ${seconds(timeoutMs)}` };
    if (error.code === ErrorCode.ConnectionClosed) return { type: "mcp_protocol_error", code: error.code, message: `MCP server "${server}" closed the connection (it exited or crashed) before it could ${what}` };
    return { type: "mcp_protocol_error", code: error.code, message: `MCP server "${server}" could not ${what}: ${excerpt(error.message)}` };
  }
  const status = (error as { code?: unknown }).code;
  if (typeof status === "number" && status >= 400 && status < 600) return { type: "http_error", code: status, message: `MCP server "${server}" answered HTTP ${status}: ${excerpt((error as Error).message)}` };
  const message = error instanceof Error ? error.message : String(error);
  return { type: "mcp_protocol_error", code: ErrorCode.InternalError, message: `MCP server "${server}" could not ${what}: ${excerpt(message)}` };
}

export class McpSession {
  private open = true;
  private readonly closedListeners: Array<() => void> = [];

  private constructor(readonly server: McpServerConfig, private readonly client: Client, private readonly limits: McpLimits, private readonly wire: Tripwire) {
    client.onclose = () => {
      if (this.open) log.info(`MCP server "${server.name}" closed its session`);
      this.markClosed();
    };
    // Unreadable messages are dropped; the request they answered then times out.
    client.onerror = (error) => log.debug(`MCP server "${server.name}": ${error.message.slice(0, 1000)}`);
    // A message over the bound ends the session (what waited for it has failed already).
    if (wire.signal.aborted) void this.close();
    else wire.signal.addEventListener("abort", () => void this.close(), { once: true });
  }

  /** Spawns or connects to the server and completes the initialize handshake; throws a McpFailure-carrying McpSessionError. */
  static async open(server: McpServerConfig, options: McpSessionOptions): Promise<McpSession> {
    const client = new Client({ name: "llamux", version: llamuxVersion });
    const wire = tripwire();
    const transport = transportFor(server, options, wire);
    const timeoutMs = options.limits.connectTimeoutMs;
    try {
      await client.connect(transport, { timeout: timeoutMs, signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), wire.signal]) });
    } catch (error) {
      await client.close().catch(() => {});
      throw new McpSessionError(failureOf(wire.signal.aborted ? wire.signal.reason : error, server.name, "start its session", timeoutMs), { cause: error });
    }
    log.debug(`MCP session open with "${server.name}"`);
    return new McpSession(server, client, options.limits, wire);
  }

  get isOpen(): boolean {
    return this.open;
  }

  /**
   * The server's tools that `keep` accepts (default all), every page read, at most maxToolsPerServer of
   * them: a filter is applied before the bound, so a tool it names is found past the first ones. Throws
   * McpSessionError.
   */
  async listTools(signal?: AbortSignal, keep: (tool: McpToolInfo) => boolean = () => true): Promise<McpToolInfo[]> {
    const timeoutMs = this.limits.listTimeoutMs;
    const deadline = AbortSignal.timeout(timeoutMs);
    const tools: McpToolInfo[] = [];
    try {
      let cursor: string | undefined;
      do {
        const page = await this.client.listTools(cursor ? { cursor } : {}, { timeout: timeoutMs, signal: this.bounded(deadline, signal) });
        for (const tool of page.tools) {
          if (tools.length >= this.limits.maxToolsPerServer) break;
          const info: McpToolInfo = {
            name: tool.name, inputSchema: tool.inputSchema as Record<string, unknown>,
            ...(tool.description ? { description: tool.description } : {}),
            ...(tool.annotations ? { annotations: tool.annotations as Record<string, unknown> } : {}),
          };
          if (keep(info)) tools.push(info);
        }
        cursor = tools.length < this.limits.maxToolsPerServer ? page.nextCursor : undefined;
      } while (cursor);
    } catch (error) {
      if (deadline.aborted) await this.close();
      throw new McpSessionError(failureOf(this.reason(deadline, error), this.server.name, "list its tools", timeoutMs), { cause: error });
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
        timeout: timeoutMs, maxTotalTimeout: timeoutMs, signal: this.bounded(deadline, signal),
      }) as CallToolResult;
    } catch (error) {
      // A server that did not answer in time may never answer: start it afresh next time.
      if (deadline.aborted) await this.close();
      return { ok: false, failure: failureOf(this.reason(deadline, error), this.server.name, `run "${name}"`, timeoutMs) };
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

  /** Ends the session; a stdio server gets MCP's shutdown (stdin's end, then SIGTERM, then SIGKILL). */
  async close(): Promise<void> {
    this.markClosed();
    await this.client.close().catch(() => {});
  }

  /** A request's signal: its deadline, the caller's signal, and a message over the bound. */
  private bounded(deadline: AbortSignal, signal?: AbortSignal): AbortSignal {
    return AbortSignal.any([deadline, this.wire.signal, ...(signal ? [signal] : [])]);
  }

  /** Why a request failed: an answer over the bound, the deadline, or the error itself. */
  private reason(deadline: AbortSignal, error: unknown): unknown {
    if (this.wire.signal.aborted) return this.wire.signal.reason;
    return deadline.aborted ? new McpError(ErrorCode.RequestTimeout, "timeout") : error;
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
