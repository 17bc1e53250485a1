// An MCP server a Conversation uses: described as one mcp.json entry (a command to spawn over stdio, or
// a URL), opened through src/mcp's hub and sessions, its tools shown to the model beside the registered
// functions and run by the conversation itself. The program using the SDK chooses what to spawn or reach;
// no URL guard applies (the program could reach the address itself).
import type { ToolDefinition } from "../chat/types.ts";
import type { ServerTool } from "../generation/tool-loop.ts";
import { McpConfigError, parseMcpConfig } from "../mcp/mcp-config.ts";
import { McpHub } from "../mcp/mcp-hub.ts";
import { DEFAULT_MCP_LIMITS, type McpLimits } from "../mcp/mcp-limits.ts";
import { McpServerError } from "./mcp-server-error.ts";

/** One server as an entry of mcp.json's "mcpServers" (Cursor's, Claude Desktop's and LM Studio's format). */
export type McpServerInit =
  | { command: string; args?: string[]; env?: Record<string, string>; cwd?: string }
  | { url: string; headers?: Record<string, string>; /** "sse" for the older HTTP+SSE transport. */ type?: string };

export interface McpServerOptions {
  /** Only these of the server's tools are shown to the model; default all. */
  allowedTools?: string[];
  /** Time and size bounds of the session (src/mcp/mcp-limits.ts); defaults as the server's. */
  limits?: Partial<McpLimits>;
}

/** A registered server: its tools as the model calls them, and its session to end. */
export class RegisteredMcpServer {
  private constructor(readonly name: string, readonly tools: ServerTool[], private readonly hub: McpHub) {}

  /**
   * Starts the server (spawns its command or connects to its URL) and lists its tools. A tool whose name
   * is in `takenNames` is shown as NAME_tool. Throws McpServerError.
   */
  static async open(name: string, server: McpServerInit, options: McpServerOptions, takenNames: Iterable<string>): Promise<RegisteredMcpServer> {
    let hub: McpHub;
    try {
      const config = parseMcpConfig(JSON.stringify({ mcpServers: { [name]: server } }), `registerMcpServer("${name}")`);
      if (!config.servers.has(name)) throw new McpConfigError(`Cannot use MCP server "${name}": it is disabled`);
      hub = new McpHub(config, { allowRequestServers: false, allowPrivateUrls: false, limits: { ...DEFAULT_MCP_LIMITS, ...options.limits } });
    } catch (error) {
      throw new McpServerError((error as Error).message, { cause: error });
    }
    const toolset = await hub.open([{
      label: name, source: { configured: name }, param: name,
      ...(options.allowedTools ? { allowedTools: { names: options.allowedTools } } : {}),
    }], takenNames);
    const listed = toolset.servers[0]!;
    if ("failure" in listed) {
      await hub.close();
      throw new McpServerError(listed.failure.message);
    }
    return new RegisteredMcpServer(name, toolset.tools, hub);
  }

  get definitions(): ToolDefinition[] {
    return this.tools.map((tool) => tool.definition);
  }

  /** Ends the session (a spawned server exits). */
  async close(): Promise<void> {
    await this.hub.close();
  }
}
