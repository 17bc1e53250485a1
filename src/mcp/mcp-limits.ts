// The bounds on what MCP servers may cost a request: how long they may take, how much they may send,
// how many sessions may be open at once. The tool loop's own bounds (rounds, calls per round, result
// sizes) live beside it in generation/tool-loop.ts. docs/security-and-limits.md lists both.

export interface McpLimits {
  /** Starting a server (spawn or connect) and its initialize handshake. */
  connectTimeoutMs: number;
  /** One tools/list (all its pages). */
  listTimeoutMs: number;
  /** One tools/call; a server that takes longer gets its session closed (a hung server is restarted next time). */
  callTimeoutMs: number;
  /** MCP sessions open at once on this server: configured servers kept open plus per-request ones. */
  maxSessions: number;
  /** Tools one server may list; the rest are left out. */
  maxToolsPerServer: number;
  /** The largest single message a server may send (a stdio line, an HTTP body, an SSE stream). */
  maxMessageBytes: number;
  /** Notifications a stdio server's output may bring per second; the rest are dropped unread. */
  notificationsPerSecond: number;
  /** Closing a stdio server: how long it has to exit after stdin's end, and again after SIGTERM, before SIGKILL. */
  closeGraceMs: number;
}

export const DEFAULT_MCP_LIMITS: McpLimits = {
  connectTimeoutMs: 15_000,
  listTimeoutMs: 10_000,
  callTimeoutMs: 30_000,
  maxSessions: 16,
  maxToolsPerServer: 128,
  maxMessageBytes: 4 * 1024 * 1024,
  notificationsPerSecond: 100,
  closeGraceMs: 2_000,
};
