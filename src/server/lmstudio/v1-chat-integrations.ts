// LM Studio's `integrations` on /api/v1/chat as the MCP servers a request uses: "mcp/NAME" or
// {"type": "plugin", "id": "mcp/NAME", allowed_tools} name a server of mcp.json (LM Studio keeps its
// mcp.json servers as plugins of that id); {"type": "ephemeral_mcp", server_label, server_url,
// allowed_tools, headers} names one by URL (only with --allow-request-mcp). LM Studio asks for no
// approval on this API, so every call runs. `provider_info` tells a call's server as LM Studio does.
import { z } from "zod";
import type { McpServerRequest } from "../../mcp/mcp-hub.ts";
import type { ServerTool } from "../../generation/tool-loop.ts";
import { badRequest } from "../api-error.ts";
import { headerMap, refuseCommand, toolFilter } from "../request-mcp.ts";

export const integrationsField = z.array(z.union([z.string(), z.looseObject({ type: z.string() })]));

const PLUGIN_PREFIX = "mcp/";

function configured(id: unknown, param: string): string {
  if (typeof id !== "string" || !id.startsWith(PLUGIN_PREFIX) || id.length === PLUGIN_PREFIX.length) {
    throw badRequest(`Only MCP plugins are served: a plugin id is "mcp/NAME" for a server NAME of mcp.json, got ${JSON.stringify(id)}`, param);
  }
  return id.slice(PLUGIN_PREFIX.length);
}

/** The request's servers; a request that names a command, a non-MCP plugin or a malformed entry is a 400. */
export function integrationRequests(integrations: z.infer<typeof integrationsField> | undefined, field: string): McpServerRequest[] {
  const requests: McpServerRequest[] = [];
  for (const [index, entry] of (integrations ?? []).entries()) {
    const param = `${field}[${index}]`;
    if (typeof entry === "string") {
      const name = configured(entry, param);
      requests.push({ label: name, source: { configured: name }, requireApproval: "never", param });
      continue;
    }
    refuseCommand(entry, param);
    const allowedTools = toolFilter(entry.allowed_tools, `${param}.allowed_tools`);
    if (entry.type === "plugin") {
      const name = configured(entry.id, `${param}.id`);
      requests.push({ label: name, source: { configured: name }, requireApproval: "never", ...(allowedTools ? { allowedTools } : {}), param: `${param}.id` });
    } else if (entry.type === "ephemeral_mcp") {
      const { server_label: label, server_url: url } = entry;
      if (typeof label !== "string" || !label) throw badRequest("An ephemeral_mcp integration needs a server_label", `${param}.server_label`);
      if (typeof url !== "string" || !url) throw badRequest("An ephemeral_mcp integration needs a server_url", `${param}.server_url`);
      const headers = headerMap(entry.headers, `${param}.headers`);
      requests.push({
        label, source: { url, ...(headers ? { headers } : {}) }, requireApproval: "never",
        ...(allowedTools ? { allowedTools } : {}), param: `${param}.server_url`,
      });
    } else {
      throw badRequest(`Unknown integration type ${JSON.stringify(entry.type)} (expected "plugin" or "ephemeral_mcp")`, `${param}.type`);
    }
  }
  return requests;
}

/** Where a call's tool comes from, as LM Studio's tool_call items and events say it. */
export function providerInfo(tool: ServerTool): Record<string, string> {
  return tool.origin.pluginId
    ? { type: "plugin", plugin_id: tool.origin.pluginId }
    : { type: "ephemeral_mcp", server_label: tool.origin.label };
}
