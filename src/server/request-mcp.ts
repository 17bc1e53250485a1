// MCP servers in requests, for every dialect's routes: the fields a request may never send (a command
// to spawn), and the request's servers opened on the listener's hub (a server without one offers no
// configured servers and refuses URLs).
import { emptyMcpConfig } from "../mcp/mcp-config.ts";
import { McpHub, type McpServerRequest, type McpToolset, type ToolFilter } from "../mcp/mcp-hub.ts";
import { badRequest } from "./api-error.ts";
import type { ServerDeps } from "./deps.ts";
import { KeyRequest } from "../keys/key-request.ts";

const noServers = new McpHub(emptyMcpConfig());

export function mcpHub(deps: ServerDeps): McpHub {
  return deps.mcp ?? noServers;
}

/** Process fields: only mcp.json may name what runs on this machine. */
const COMMAND_FIELDS = ["command", "args", "env", "cwd"];

/** Refuses an MCP server entry of a request that names a process to spawn. */
export function refuseCommand(entry: Record<string, unknown>, param: string): void {
  const field = COMMAND_FIELDS.find((key) => entry[key] !== undefined);
  if (field) {
    throw badRequest(`A request cannot name a command to run as an MCP server ("${field}"): add the server to mcp.json on the server and name it by its label`, `${param}.${field}`);
  }
}

/** `allowed_tools` as OpenAI and LM Studio write it: a list of names, or OpenAI's {tool_names, read_only}. */
export function toolFilter(value: unknown, param: string): ToolFilter | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value) && value.every((name) => typeof name === "string")) return { names: value };
  if (typeof value === "object" && !Array.isArray(value)) {
    const filter = value as { tool_names?: unknown; read_only?: unknown };
    const names = filter.tool_names;
    if ((names === undefined || (Array.isArray(names) && names.every((n) => typeof n === "string"))) && (filter.read_only === undefined || typeof filter.read_only === "boolean")) {
      return { ...(names ? { names: names as string[] } : {}), ...(filter.read_only !== undefined ? { readOnly: filter.read_only } : {}) };
    }
  }
  throw badRequest('allowed_tools must be a list of tool names or {"tool_names": [...], "read_only": true|false}', param);
}

/** HTTP headers for a server a request names: a string map. */
export function headerMap(value: unknown, param: string): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "object" && !Array.isArray(value) && Object.values(value).every((v) => typeof v === "string")) return value as Record<string, string>;
  throw badRequest("headers must be an object of header names to string values", param);
}

/**
 * Opens the request's servers (after the checks that need no connection); refusals are 400s. On a server
 * with keys, a request that names any needs the mcp scope (403), and the sessions it opens are its key's.
 */
export async function openRequestServers(deps: ServerDeps, requests: McpServerRequest[], reservedNames: Iterable<string>, signal?: AbortSignal): Promise<McpToolset | undefined> {
  if (requests.length === 0) return undefined;
  const work = KeyRequest.current();
  work?.requireScope("mcp", "use MCP servers (tools the server runs)");
  return mcpHub(deps).open(requests, reservedNames, signal, work?.grant.owner ?? "");
}
