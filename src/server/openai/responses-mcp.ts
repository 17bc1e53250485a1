// The Responses API's remote MCP tools: {"type": "mcp", server_label, server_url | a configured label,
// allowed_tools, require_approval, headers, authorization} as the servers a request uses;
// tool_choice {"type": "mcp", server_label, name}; mcp_approval_response items resolved against the
// approvals a response asked for; and the output items (mcp_list_tools, mcp_call, mcp_approval_request)
// in OpenAI's shapes.
import type { ToolChoice } from "../../generation/chat-output.ts";
import type { ResumedCall, ServerTool } from "../../generation/tool-loop.ts";
import type { ServerToolFailure, ServerToolOutcome } from "../../generation/tool-results.ts";
import type { ParsedToolCall } from "../../chat/output-parser.ts";
import type { ListedServer, McpServerRequest, McpToolset } from "../../mcp/mcp-hub.ts";
import { newId } from "../../ids.ts";
import { ApiError, badRequest } from "../api-error.ts";
import { headerMap, refuseCommand, toolFilter } from "../request-mcp.ts";
import type { PendingApproval } from "./response-store.ts";
import type { OutputItem } from "./responses-output.ts";
import type { ResponseInputItem, ResponseTool } from "./responses-schema.ts";

function approvalRule(value: unknown, param: string): McpServerRequest["requireApproval"] {
  // OpenAI asks for approval unless told otherwise.
  if (value === undefined || value === null) return "always";
  if (value === "always" || value === "never") return value;
  if (typeof value === "object" && !Array.isArray(value)) {
    const rule = value as { always?: unknown; never?: unknown };
    return {
      ...(rule.always !== undefined ? { always: toolFilter(rule.always, `${param}.always`)! } : {}),
      ...(rule.never !== undefined ? { never: toolFilter(rule.never, `${param}.never`)! } : {}),
    };
  }
  throw badRequest('require_approval must be "always", "never" or {"always": {...}, "never": {...}}', param);
}

/** The request's MCP servers: a server_url is one the request names; a label alone is a configured server. */
export function mcpServerRequests(tools: ResponseTool[] | null | undefined): McpServerRequest[] {
  const requests: McpServerRequest[] = [];
  for (const [index, tool] of (tools ?? []).entries()) {
    if (tool.type !== "mcp") continue;
    const param = `tools[${index}]`;
    refuseCommand(tool, param);
    const label = tool.server_label;
    if (typeof label !== "string" || !label) throw badRequest("An mcp tool needs a server_label", `${param}.server_label`);
    if (tool.connector_id !== undefined || tool.tunnel_id !== undefined) throw badRequest("Connectors and tunnels are OpenAI services; give a server_url or the label of a server in mcp.json", param);
    const url = tool.server_url;
    if (url !== undefined && typeof url !== "string") throw badRequest("server_url must be a string", `${param}.server_url`);
    const headers = { ...headerMap(tool.headers, `${param}.headers`) };
    if (typeof tool.authorization === "string") headers.Authorization = `Bearer ${tool.authorization}`;
    const allowedTools = toolFilter(tool.allowed_tools, `${param}.allowed_tools`);
    requests.push({
      label,
      source: url ? { url, ...(Object.keys(headers).length ? { headers } : {}) } : { configured: label },
      requireApproval: approvalRule(tool.require_approval, `${param}.require_approval`),
      ...(allowedTools ? { allowedTools } : {}),
      param: url ? `${param}.server_url` : `${param}.server_label`,
    });
  }
  return requests;
}

/** A tool by its server's label and its own name. */
const toolOf = (tools: ServerTool[], label: string, name: string) => tools.find((t) => t.origin.label === label && t.serverName === name);

/** {"type": "mcp", "server_label", "name"?} as the tool the model must call (or "required" among a server's several). */
export function mcpToolChoice(value: unknown, toolset: McpToolset | undefined): ToolChoice | undefined {
  const choice = value as { type?: unknown; server_label?: unknown; name?: unknown } | null | undefined;
  if (typeof choice !== "object" || choice === null || choice.type !== "mcp") return undefined;
  if (typeof choice.server_label !== "string") throw badRequest('tool_choice {"type": "mcp"} needs a server_label', "tool_choice.server_label");
  const label = choice.server_label;
  const listed = toolset?.servers.find((server) => server.label === label);
  if (!listed) throw badRequest(`tool_choice names MCP server "${label}", which no mcp tool of this request names`, "tool_choice.server_label");
  if ("failure" in listed) throw new ApiError(424, `Cannot force a call to MCP server "${label}": ${listed.failure.message}`, { param: "tool_choice", code: "mcp_list_tools_failed" });
  const tools = toolset!.tools.filter((tool) => tool.origin.label === label);
  if (typeof choice.name === "string" && choice.name) {
    const tool = toolOf(tools, label, choice.name);
    if (!tool) throw badRequest(`tool_choice names tool "${choice.name}", which MCP server "${label}" does not offer (or allowed_tools leaves out)`, "tool_choice.name");
    return { name: tool.name };
  }
  if (tools.length === 0) throw badRequest(`tool_choice names MCP server "${label}", which offers no tools`, "tool_choice.server_label");
  return tools.length === 1 ? { name: tools[0]!.name } : "required";
}

/**
 * The calls the input's mcp_approval_response items answer: each among the approvals the previous
 * response asked for (as stored), and its tool among this request's. An mcp_approval_request item in the
 * input approves nothing: a client could write its own, naming any call.
 */
export function resumedCalls(input: ResponseInputItem[] | string | undefined, stored: PendingApproval[], toolset: McpToolset | undefined): ResumedCall[] {
  if (!Array.isArray(input)) return [];
  const known = new Map(stored.map((pending) => [pending.id, pending]));
  const resumed: ResumedCall[] = [];
  for (const [index, item] of input.entries()) {
    if (item.type !== "mcp_approval_response") continue;
    const param = `input[${index}]`;
    const id = item.approval_request_id;
    if (typeof id !== "string" || typeof item.approve !== "boolean") throw badRequest("An mcp_approval_response needs approval_request_id and approve (true or false)", param);
    const pending = known.get(id);
    if (!pending) throw badRequest(`No MCP approval request "${id}" is waiting (pass previous_response_id of the response that asked for it)`, `${param}.approval_request_id`);
    const tool = toolOf(toolset?.tools ?? [], pending.serverLabel, pending.name);
    if (!tool) throw badRequest(`The approved call is to tool "${pending.name}" of MCP server "${pending.serverLabel}", which this request's tools do not offer`, `${param}.approval_request_id`);
    const call: ParsedToolCall = { id: pending.callId, name: tool.name, arguments: pending.arguments };
    resumed.push({ call, tool, approved: item.approve, approvalRequestId: id });
  }
  return resumed;
}

export const newMcpListId = () => newId("mcpListTools");
export const newMcpCallId = () => newId("mcpCall");
export const newApprovalId = () => newId("mcpApprovalRequest");

/** An mcp_list_tools item; `done` false gives the item as output_item.added shows it (no tools yet). */
export function mcpListToolsItem(id: string, listed: ListedServer, done: boolean): OutputItem {
  const tools = done && "tools" in listed
    ? listed.tools.map((tool) => ({ name: tool.name, input_schema: tool.inputSchema, description: tool.description ?? null, annotations: tool.annotations ?? null }))
    : [];
  return { id, type: "mcp_list_tools", server_label: listed.label, tools, ...(done && "failure" in listed ? { error: listed.failure.message } : {}) };
}

/** OpenAI's McpToolCallError of a failed call; a bound of the loop reads as a protocol error. */
export function mcpCallError(failure: ServerToolFailure): Record<string, unknown> {
  switch (failure.type) {
    case "mcp_tool_execution_error":
      return { type: "mcp_tool_execution_error", content: failure.content ?? [{ type: "text", text: failure.message }], message: failure.message };
    case "http_error":
      return { type: "http_error", code: failure.code ?? 0, message: failure.message };
    default:
      return { type: "mcp_protocol_error", code: failure.code ?? -32000, message: failure.message };
  }
}

export function mcpCallItem(
  id: string, tool: ServerTool, args: string, state: { outcome?: ServerToolOutcome; approvalRequestId?: string },
): OutputItem {
  const { outcome } = state;
  return {
    id, type: "mcp_call", server_label: tool.origin.label, name: tool.serverName, arguments: args,
    status: outcome === undefined ? "in_progress" : outcome.ok ? "completed" : "failed",
    output: outcome?.ok ? outcome.output : null,
    error: outcome && !outcome.ok ? mcpCallError(outcome.failure) : null,
    approval_request_id: state.approvalRequestId ?? null,
  };
}

export const mcpApprovalRequestItem = (id: string, tool: ServerTool, args: string): OutputItem =>
  ({ id, type: "mcp_approval_request", server_label: tool.origin.label, name: tool.serverName, arguments: args });
