// A request that names MCP servers it may not use (an unknown name, a URL without --allow-request-mcp or
// to a private address); routes answer it with a 400 naming the field.
export class McpRequestError extends Error {
  constructor(message: string, readonly param: string) {
    super(message);
    this.name = "McpRequestError";
  }
}
