// The MCP servers one listener may use, and the sessions it has open with them: configured servers
// (mcp.json) keep one session each per owner (the API key whose requests opened it: a server's state is
// never shared between keys), opened on first use and reopened after a crash or a hang; servers a
// request names by URL get a session for that request only, and only when the server allows it
// (--allow-request-mcp), under the URL guard. A request's servers become the tool loop's ServerTools.
import { logger, logEnabled } from "../log.ts";
import type { ServerTool, ToolOrigin } from "../generation/tool-loop.ts";
import type { ServerToolOutcome } from "../generation/tool-results.ts";
import type { McpConfig, McpServerConfig } from "./mcp-config.ts";
import { DEFAULT_MCP_LIMITS, type McpLimits } from "./mcp-limits.ts";
import { checkMcpUrl, McpUrlError } from "./guarded-fetch.ts";
import { McpRequestError } from "./mcp-request-error.ts";
import { McpSession, McpSessionError, type McpFailure, type McpToolInfo } from "./mcp-session.ts";

const log = logger("mcp");

export { McpRequestError };

export interface McpPolicy {
  /** Requests may name servers by URL (`--allow-request-mcp`). Default: false. */
  allowRequestServers: boolean;
  /** Those URLs may reach loopback, private and link-local addresses (`--allow-private-mcp-urls`). Default: false. */
  allowPrivateUrls: boolean;
  limits: McpLimits;
}

export const defaultMcpPolicy: McpPolicy = { allowRequestServers: false, allowPrivateUrls: false, limits: DEFAULT_MCP_LIMITS };

/** Which of a server's tools a rule covers: by name, and/or those annotated read-only. */
export interface ToolFilter {
  names?: string[];
  readOnly?: boolean;
}

/** One server a request uses, whatever API named it. */
export interface McpServerRequest {
  /** How the request's items name it (OpenAI's server_label, LM Studio's plugin id or label). */
  label: string;
  source: { configured: string } | { url: string; headers?: Record<string, string> };
  /** Only these tools are offered; default all. */
  allowedTools?: ToolFilter;
  /** Which calls wait for the client's approval; default none. */
  requireApproval?: "always" | "never" | { always?: ToolFilter; never?: ToolFilter };
  /** "param" of a 400 about this server. */
  param: string;
}

/** A server's tools as a request lists them, or why they could not be listed. */
export type ListedServer =
  | { label: string; request: McpServerRequest; tools: McpToolInfo[] }
  | { label: string; request: McpServerRequest; failure: McpFailure };

export interface McpToolset {
  servers: ListedServer[];
  tools: ServerTool[];
  /** Ends the request's own sessions (configured ones stay open). */
  close(): Promise<void>;
}

function matches(filter: ToolFilter | undefined, tool: McpToolInfo): boolean {
  if (!filter) return false;
  if (filter.names?.includes(tool.name)) return true;
  return filter.readOnly === true && tool.annotations?.readOnlyHint === true;
}

function needsApproval(rule: McpServerRequest["requireApproval"], tool: McpToolInfo): boolean {
  if (rule === undefined || rule === "never") return false;
  if (rule === "always") return true;
  if (matches(rule.never, tool)) return false;
  // As OpenAI: a tool neither rule names waits for approval.
  return true;
}

const allowed = (filter: ToolFilter | undefined, tool: McpToolInfo) => !filter || matches(filter, tool);

const clip = (text: string) => (text.length > 500 ? `${text.slice(0, 500)}…` : text);

export class McpHub {
  private readonly pooled = new Map<string, Promise<McpSession>>();
  /** Every session open now, the configured servers' and the requests' own. */
  private readonly sessions = new Set<McpSession>();
  private opening = 0;
  private closed = false;

  constructor(readonly config: McpConfig, readonly policy: McpPolicy = defaultMcpPolicy) {}

  /** The names of the configured servers. */
  get configuredNames(): string[] {
    return [...this.config.servers.keys()];
  }

  /** Refuses what a request may not name, before anything is opened: unknown names, URLs without the flag. */
  check(requests: McpServerRequest[]): void {
    const labels = new Set<string>();
    for (const request of requests) {
      if (labels.has(request.label)) throw new McpRequestError(`MCP server label "${request.label}" is used twice in one request`, request.param);
      labels.add(request.label);
      if ("configured" in request.source) {
        if (!this.config.servers.has(request.source.configured)) {
          const known = this.configuredNames;
          throw new McpRequestError(
            `No MCP server "${request.source.configured}" is configured (${known.length ? `configured: ${known.join(", ")}` : this.config.sources.length ? "none is: add it to mcp.json" : "this server runs none: start it with --mcp to read mcp.json, or --mcp-config FILE"})`,
            request.param,
          );
        }
      } else if (!this.policy.allowRequestServers) {
        throw new McpRequestError(
          "MCP servers named by URL in a request are not allowed on this server (start it with --allow-request-mcp; servers in mcp.json can be named by label)",
          request.param,
        );
      }
    }
  }

  /**
   * Opens (or reuses) each server's session and lists its tools. A server that cannot be reached or listed
   * becomes a ListedServer with a failure; a URL the guard refuses throws McpRequestError.
   */
  async open(requests: McpServerRequest[], reservedNames: Iterable<string> = [], signal?: AbortSignal, owner = ""): Promise<McpToolset> {
    this.check(requests);
    for (const request of requests) {
      if (!("url" in request.source)) continue;
      let url: URL;
      try {
        url = new URL(request.source.url);
      } catch {
        throw new McpRequestError(`Cannot connect to MCP server "${request.label}": "${request.source.url.slice(0, 80)}" is not a URL`, request.param);
      }
      try {
        await checkMcpUrl(url, { allowPrivate: this.policy.allowPrivateUrls });
      } catch (error) {
        if (error instanceof McpUrlError) throw new McpRequestError(error.message, request.param);
        throw error;
      }
    }
    const own: McpSession[] = [];
    const servers: ListedServer[] = [];
    const tools: ServerTool[] = [];
    const taken = new Set(reservedNames);
    for (const request of requests) {
      let session: McpSession;
      try {
        session = await this.sessionFor(request, own, owner);
        const listed = await session.listTools(signal, (tool) => allowed(request.allowedTools, tool));
        servers.push({ label: request.label, request, tools: listed });
        for (const info of listed) {
          // The model sees a tool's own name; a second tool of that name gets its server's label in front.
          const name = [info.name, `${request.label}_${info.name}`].find((candidate) => !taken.has(candidate));
          if (!name) continue;
          taken.add(name);
          tools.push(this.serverTool(session, request, info, name, owner));
        }
      } catch (error) {
        if (!(error instanceof McpSessionError)) throw error;
        log.warn(error.message);
        servers.push({ label: request.label, request, failure: error.failure });
      }
    }
    return {
      servers, tools,
      close: async () => {
        await Promise.all(own.map((session) => session.close()));
      },
    };
  }

  /** Ends every session, the requests' own too (at shutdown): stdio servers get MCP's shutdown sequence. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled(this.pooled.values());
    this.pooled.clear();
    await Promise.all([...this.sessions].map((session) => session.close()));
  }

  private async sessionFor(request: McpServerRequest, own: McpSession[], owner: string): Promise<McpSession> {
    if ("configured" in request.source) return this.pooledSession(this.config.servers.get(request.source.configured)!, owner);
    const { url, headers } = request.source;
    const server: McpServerConfig = { kind: "http", name: request.label, url, ...(headers ? { headers } : {}), sse: false };
    const session = await this.counted(() => McpSession.open(server, { limits: this.policy.limits, urlGuard: { allowPrivate: this.policy.allowPrivateUrls, maxRedirects: 5 } }));
    own.push(session);
    return session;
  }

  private async pooledSession(server: McpServerConfig, owner: string): Promise<McpSession> {
    const key = JSON.stringify([owner, server.name]);
    const existing = this.pooled.get(key);
    if (existing) {
      const session = await existing.catch(() => undefined);
      if (session?.isOpen) return session;
      if (this.pooled.get(key) === existing) this.pooled.delete(key);
      else return this.pooledSession(server, owner);
    }
    const opening = this.counted(() => McpSession.open(server, { limits: this.policy.limits }));
    this.pooled.set(key, opening);
    opening.catch(() => {
      if (this.pooled.get(key) === opening) this.pooled.delete(key);
    });
    return opening;
  }

  /** Opens a session within the bound on open sessions; its close frees its place. */
  private async counted(open: () => Promise<McpSession>): Promise<McpSession> {
    if (this.sessions.size + this.opening >= this.policy.limits.maxSessions) {
      throw new McpSessionError({ type: "mcp_protocol_error", code: -32000, message: `Cannot open another MCP session: ${this.policy.limits.maxSessions} are open (the server's limit)` });
    }
    this.opening++;
    let session: McpSession;
    try {
      session = await open();
    } finally {
      this.opening--;
    }
    if (this.closed) {
      await session.close();
      throw new McpSessionError({ type: "mcp_protocol_error", code: -32000, message: "Cannot open an MCP session: the server is shutting down" });
    }
    this.sessions.add(session);
    session.onClosed(() => this.sessions.delete(session));
    return session;
  }

  private serverTool(session: McpSession, request: McpServerRequest, info: McpToolInfo, name: string, owner: string): ServerTool {
    const origin: ToolOrigin = { label: request.label, ...("configured" in request.source ? { pluginId: `mcp/${request.source.configured}` } : {}) };
    const label = request.label;
    return {
      name, serverName: info.name, origin,
      requiresApproval: needsApproval(request.requireApproval, info),
      definition: {
        type: "function",
        function: { name, ...(info.description ? { description: info.description } : {}), parameters: info.inputSchema },
      },
      run: async (args, signal): Promise<ServerToolOutcome> => {
        const started = performance.now();
        // The session may have closed since it listed (a crash, a timeout): a configured server starts afresh.
        let current = session;
        if (!current.isOpen && "configured" in request.source) {
          try {
            current = await this.pooledSession(this.config.servers.get(request.source.configured)!, owner);
          } catch (error) {
            if (error instanceof McpSessionError) return { ok: false, failure: error.failure };
            throw error;
          }
        }
        if (logEnabled("debug")) log.debug(`call ${label}/${info.name} arguments ${clip(JSON.stringify(args))}`);
        const outcome = current.isOpen
          ? await current.callTool(info.name, args, signal)
          : { ok: false as const, failure: { type: "mcp_protocol_error" as const, code: -32000, message: `MCP server "${label}" closed its session before the call` } };
        const ms = Math.round(performance.now() - started);
        if (outcome.ok) {
          log.info(`MCP call ${label}/${info.name} answered in ${ms} ms`);
          if (logEnabled("debug")) log.debug(`call ${label}/${info.name} result ${clip(outcome.text)}`);
          return { ok: true, output: outcome.text, content: outcome.content };
        }
        log.info(`MCP call ${label}/${info.name} failed in ${ms} ms: ${outcome.failure.type}`);
        if (logEnabled("debug")) log.debug(`call ${label}/${info.name} failure ${clip(outcome.failure.message)}`);
        return { ok: false, failure: outcome.failure };
      },
    };
  }
}
