// A Realtime session's MCP servers: the `mcp` entries of session.update's tools, as the Responses API
// reads them (a configured server by its label; a server_url only with --allow-request-mcp). The session
// lists each server's tools as soon as it is set, as OpenAI does: an `mcp_list_tools` item added to the
// conversation, `mcp_list_tools.in_progress`, then `.completed` or `.failed` and the item done with its
// tools. Replies run the listed tools through the tool loop; a call that waits for approval is answered
// by the client's `mcp_approval_response` item and runs at the start of the next reply.
import type { ResumedCall, ServerTool } from "../../../generation/tool-loop.ts";
import type { McpServerRequest, McpToolset } from "../../../mcp/mcp-hub.ts";
import { McpRequestError } from "../../../mcp/mcp-hub.ts";
import type { KeyRequest } from "../../../keys/key-request.ts";
import { ApiError } from "../../api-error.ts";
import type { ServerDeps } from "../../deps.ts";
import { mcpHub, openRequestServers } from "../../request-mcp.ts";
import type { PendingApproval } from "../response-store.ts";
import { mcpListToolsItem, mcpServerRequests } from "../responses-mcp.ts";
import type { ResponseTool } from "../responses-schema.ts";
import { ClientEventError } from "./client-events.ts";
import { newItemId, type Conversation, type Item } from "./conversation.ts";

type Emit = (type: string, fields: Record<string, unknown>) => void;

/** A request error about `tools[i]` as an error event about `session.tools[i]`. */
function asClientError(error: unknown, prefix: string): unknown {
  if (error instanceof McpRequestError) return new ClientEventError(error.message, `${prefix}${error.param}`, "invalid_value");
  if (error instanceof ApiError && error.status < 500) return new ClientEventError(error.message, error.param ? `${prefix}${error.param}` : null, error.code ?? "invalid_value");
  return error;
}

/** The MCP servers `tools` names, checked against what this server may open; throws a ClientEventError. */
export function mcpRequestsOf(deps: ServerDeps, tools: Array<Record<string, unknown>>, prefix: string): McpServerRequest[] {
  try {
    const requests = mcpServerRequests(tools as ResponseTool[]);
    mcpHub(deps).check(requests);
    return requests;
  } catch (error) {
    throw asClientError(error, prefix);
  }
}

export class SessionMcp {
  private listing: Promise<McpToolset | undefined> = Promise.resolve(undefined);
  /** The calls replies left waiting for the client's approval, by approval request id. */
  private readonly pending = new Map<string, PendingApproval>();
  private closed = false;

  constructor(
    private readonly deps: ServerDeps, private readonly work: KeyRequest | undefined, private readonly conversation: Conversation,
    private readonly emit: Emit, private readonly signal: AbortSignal,
  ) {}

  /** Lists the servers of a session.update (none: the session has no MCP tools any more); the previous ones are let go. */
  set(requests: McpServerRequest[], functionNames: string[]): void {
    const previous = this.listing;
    this.pending.clear();
    void previous.then((toolset) => toolset?.close());
    this.listing = requests.length ? this.list(requests, functionNames) : Promise.resolve(undefined);
  }

  /** The servers' tools for a reply (waits for a listing in progress); undefined when the session has none. */
  toolset(): Promise<McpToolset | undefined> {
    return this.listing;
  }

  private async list(requests: McpServerRequest[], functionNames: string[]): Promise<McpToolset | undefined> {
    const items = requests.map((request) => {
      const item: Item = { id: newItemId(), type: "mcp_list_tools", status: "in_progress", mcp: { type: "mcp_list_tools", server_label: request.label, tools: [] } };
      const previous = this.conversation.add(item);
      this.emit("conversation.item.added", { previous_item_id: previous, item: { id: item.id, ...item.mcp } });
      this.emit("mcp_list_tools.in_progress", { item_id: item.id });
      return item;
    });
    let toolset: McpToolset | undefined;
    try {
      const open = () => openRequestServers(this.deps, requests, functionNames, this.signal);
      toolset = await (this.work ? this.work.run(open) : open());
    } catch (error) {
      const message = (error as Error).message;
      for (const item of items) {
        item.status = "incomplete";
        item.mcp = { ...item.mcp, error: message };
        this.emit("mcp_list_tools.failed", { item_id: item.id });
        this.emit("conversation.item.done", { item: { id: item.id, ...item.mcp } });
      }
      this.emit("error", { error: { type: "invalid_request_error", code: "mcp_list_tools_failed", message, param: "session.tools", event_id: null } });
      return undefined;
    }
    if (this.closed) {
      await toolset?.close();
      return undefined;
    }
    for (const [index, listed] of (toolset?.servers ?? []).entries()) {
      const item = items[index]!;
      const { id: _id, ...wire } = mcpListToolsItem(item.id, listed, true);
      item.mcp = wire;
      item.status = "failure" in listed ? "incomplete" : "completed";
      this.emit("failure" in listed ? "mcp_list_tools.failed" : "mcp_list_tools.completed", { item_id: item.id });
      this.emit("conversation.item.done", { item: { id: item.id, ...item.mcp } });
    }
    return toolset;
  }

  /** Keeps a call that waits for the client's approval. */
  waitForApproval(approval: PendingApproval): void {
    this.pending.set(approval.id, approval);
  }

  /**
   * The approved or denied calls whose `mcp_approval_response` items are in `items`, each once: a reply runs
   * them (or refuses them) before it generates. An approval request the session never made approves nothing.
   */
  resumedCalls(items: Item[], tools: ServerTool[]): ResumedCall[] {
    const resumed: ResumedCall[] = [];
    for (const item of items) {
      if (item.type !== "mcp_approval_response") continue;
      const id = item.mcp?.approval_request_id as string;
      const pending = this.pending.get(id);
      if (!pending) continue;
      this.pending.delete(id);
      const tool = tools.find((t) => t.origin.label === pending.serverLabel && t.serverName === pending.name);
      if (!tool) continue;
      resumed.push({ call: { id: pending.callId, name: tool.name, arguments: pending.arguments }, tool, approved: item.mcp?.approve === true, approvalRequestId: id });
    }
    return resumed;
  }

  /** Whether the session asked for this approval and has not had its answer yet. */
  isPending(approvalRequestId: string): boolean {
    return this.pending.has(approvalRequestId);
  }

  /** The session ended: its own sessions with URL servers close (configured servers stay open for the next). */
  close(): void {
    this.closed = true;
    void this.listing.then((toolset) => toolset?.close());
  }
}
