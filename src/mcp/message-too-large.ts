// An MCP server sent one message over the bound (a stdio line, an HTTP body, an SSE stream): the request
// it answered fails at once with this, and its session is closed, rather than waiting out a timeout.
const size = (bytes: number) => (bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`);

export class McpMessageTooLargeError extends Error {
  /** What the server did, without naming it: "sent more than 4 MiB in one message (…)". */
  readonly what: string;

  /** `who` names the server: `MCP server "files"`, `MCP server at "https://…"`. */
  constructor(who: string, readonly maxBytes: number) {
    const what = `sent more than ${size(maxBytes)} in one message (the bound on one message)`;
    super(`${who} ${what}`);
    this.name = "McpMessageTooLargeError";
    this.what = what;
  }
}
