// The error of an MCP server a Conversation could not register, apart from the sessions themselves so that
// the browser's stand-in (mcp-server-unavailable.ts) throws the same class.

/** A server that could not be registered: a bad entry, or one that could not start or list its tools. */
export class McpServerError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "McpServerError";
  }
}
