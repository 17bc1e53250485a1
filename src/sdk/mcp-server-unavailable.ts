// What "#mcp-server" is in a browser bundle (package.json's imports, condition "browser"): a page cannot
// spawn a server or reach one past its own origin's rules the way src/mcp does, so registering one fails
// with the reason, and the rest of the remote SDK bundles without Node's modules.
import type { RegisteredMcpServer as Sessions } from "./mcp-server.ts";
import { McpServerError } from "./mcp-server-error.ts";

export const RegisteredMcpServer = {
  async open(name: string): Promise<never> {
    throw new McpServerError(`Cannot register MCP server "${name}": MCP servers run under Node or Bun, not in a browser`);
  },
} satisfies Pick<typeof Sessions, "open">;
