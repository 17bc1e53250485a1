// The streamed Responses API: a reply's chat events as OpenAI's event sequence. Each output item is
// announced (output_item.added), filled (content_part.added, then text, reasoning or argument deltas) and
// closed (….done, output_item.done) before the next opens; every event carries a sequence_number, and the
// stream ends with response.completed, response.incomplete (out of tokens) or response.failed. MCP
// servers add their items in OpenAI's order: mcp_list_tools (added, mcp_list_tools.in_progress,
// .completed or .failed, done) before the reply, each mcp_call (added, mcp_call.in_progress,
// mcp_call_arguments.delta/.done, mcp_call.completed or .failed, done) where the model made it, and
// mcp_approval_request items (added, done) for calls that wait for the client.
import { newId, reshapeId } from "../../ids.ts";
import type { ChatEvent } from "../../generation/chat-events.ts";
import type { ServerTool, ToolLoopEvent } from "../../generation/tool-loop.ts";
import type { ListedServer } from "../../mcp/mcp-hub.ts";
import type { PendingApproval } from "./response-store.ts";
import { mcpApprovalRequestItem, mcpCallItem, mcpListToolsItem, newApprovalId, newMcpCallId, newMcpListId } from "./responses-mcp.ts";
import {
  functionCallItem, messageItem, newItemId, outputTextPart, reasoningItem, responseObject, responsesUsage, statusOf,
  type OutputItem, type ResponseEnvelope,
} from "./responses-output.ts";

type Emit = (type: string, fields: Record<string, unknown>) => Promise<void>;

interface OpenText {
  kind: "reasoning" | "message";
  id: string;
  index: number;
  text: string;
}

interface OpenCall {
  id: string;
  index: number;
  callId: string;
  name: string;
}

interface OpenMcpCall {
  id: string;
  index: number;
  tool: ServerTool;
}

export class ResponseEventWriter {
  private sequence = 0;
  private readonly items: OutputItem[] = [];
  private open: OpenText | undefined;
  /** Calls of the current generation by their index in it (indices start again each generation). */
  private readonly calls = new Map<number, OpenCall>();
  private readonly mcpCalls = new Map<number, OpenMcpCall>();
  private readonly mcpCallsById = new Map<string, OpenMcpCall>();
  /** The calls this response leaves waiting for the client's approval. */
  readonly pendingApprovals: PendingApproval[] = [];
  /** Whitespace-only answer text, held until real text follows (text that only pads tool calls is dropped). */
  private heldSpace = "";
  /** All reasoning text, for the usage's reasoning token count. */
  reasoning = "";

  constructor(private readonly envelope: ResponseEnvelope, private readonly send: (data: { type: string } & Record<string, unknown>) => Promise<void>) {}

  private readonly emit: Emit = (type, fields) => this.send({ type, sequence_number: this.sequence++, ...fields });

  async start(): Promise<void> {
    const response = responseObject(this.envelope, "in_progress", []);
    await this.emit("response.created", { response });
    await this.emit("response.in_progress", { response });
  }

  /** The mcp_list_tools item of each server the request uses. */
  async listTools(servers: ListedServer[]): Promise<void> {
    for (const listed of servers) {
      const id = newMcpListId();
      const index = this.items.length;
      const item = mcpListToolsItem(id, listed, false);
      this.items.push(item);
      await this.emit("response.output_item.added", { output_index: index, item });
      await this.emit("response.mcp_list_tools.in_progress", { item_id: id, output_index: index });
      const done = mcpListToolsItem(id, listed, true);
      this.items[index] = done;
      await this.emit("failure" in listed ? "response.mcp_list_tools.failed" : "response.mcp_list_tools.completed", { item_id: id, output_index: index });
      await this.emit("response.output_item.done", { output_index: index, item: done });
    }
  }

  /** Every event of the tool loop but `done` (see finish). */
  async push(event: Exclude<ToolLoopEvent, { type: "done" }>): Promise<void> {
    switch (event.type) {
      case "round":
        await this.closeOpen();
        this.heldSpace = "";
        this.calls.clear();
        this.mcpCalls.clear();
        return;
      case "server_call_delta":
        // A call that waits for approval shows as its approval request once complete.
        if (event.tool.requiresApproval) return;
        return this.mcpDelta(event.index, event.tool, event.arguments);
      case "server_call":
        return this.mcpArgumentsDone(event);
      case "server_result":
        return this.mcpResult(event);
      case "approval_request":
        return this.approvalRequest(event);
      case "reasoning":
        this.reasoning += event.text;
        return this.text("reasoning", event.text);
      case "content":
        if (!event.text) return;
        if (!event.text.trim() && this.open?.kind !== "message") {
          this.heldSpace += event.text;
          return;
        }
        await this.text("message", this.heldSpace + event.text);
        this.heldSpace = "";
        return;
      case "tool_call_delta":
        return this.callDelta(event);
      case "tool_call":
        return this.callDone(event.index, JSON.stringify(event.call.arguments));
      case "error":
        await this.closeOpen();
        await this.emit("response.failed", {
          response: responseObject(this.envelope, "failed", this.items, { error: { code: "server_error", message: event.message } }),
        });
    }
  }

  async finish(done: Extract<ChatEvent, { type: "done" }>, reasoningTokens: number): Promise<OutputItem[]> {
    if (this.items.length === 0 && this.heldSpace) await this.text("message", this.heldSpace);
    await this.closeOpen();
    const status = statusOf(done.finishReason);
    const response = responseObject(this.envelope, status, this.items, { usage: responsesUsage(done.usage, reasoningTokens) });
    await this.emit(status === "incomplete" ? "response.incomplete" : "response.completed", { response });
    return this.items;
  }

  private async openMcpCall(tool: ServerTool, approvalRequestId?: string): Promise<OpenMcpCall> {
    await this.closeOpen();
    this.heldSpace = "";
    const call: OpenMcpCall = { id: newMcpCallId(), index: this.items.length, tool };
    const item = mcpCallItem(call.id, tool, "", approvalRequestId ? { approvalRequestId } : {});
    this.items.push(item);
    await this.emit("response.output_item.added", { output_index: call.index, item });
    await this.emit("response.mcp_call.in_progress", { item_id: call.id, output_index: call.index });
    return call;
  }

  private async mcpDelta(index: number, tool: ServerTool, delta: string): Promise<void> {
    let call = this.mcpCalls.get(index);
    if (!call) {
      call = await this.openMcpCall(tool);
      this.mcpCalls.set(index, call);
    }
    if (delta) await this.emit("response.mcp_call_arguments.delta", { item_id: call.id, output_index: call.index, delta });
  }

  private async mcpArgumentsDone(event: Extract<ToolLoopEvent, { type: "server_call" }>): Promise<void> {
    let call = event.index !== undefined ? this.mcpCalls.get(event.index) : undefined;
    call ??= await this.openMcpCall(event.tool, event.approvalRequestId);
    this.mcpCallsById.set(event.call.id, call);
    await this.emit("response.mcp_call_arguments.done", { item_id: call.id, output_index: call.index, arguments: JSON.stringify(event.call.arguments) });
  }

  private async mcpResult(event: Extract<ToolLoopEvent, { type: "server_result" }>): Promise<void> {
    const call = this.mcpCallsById.get(event.call.id);
    if (!call) return;
    const item = mcpCallItem(call.id, event.tool, JSON.stringify(event.call.arguments), {
      outcome: event.outcome, ...(event.approvalRequestId ? { approvalRequestId: event.approvalRequestId } : {}),
    });
    this.items[call.index] = item;
    await this.emit(event.outcome.ok ? "response.mcp_call.completed" : "response.mcp_call.failed", { item_id: call.id, output_index: call.index });
    await this.emit("response.output_item.done", { output_index: call.index, item });
  }

  private async approvalRequest(event: Extract<ToolLoopEvent, { type: "approval_request" }>): Promise<void> {
    await this.closeOpen();
    const id = newApprovalId();
    const item = mcpApprovalRequestItem(id, event.tool, JSON.stringify(event.call.arguments));
    const index = this.items.length;
    this.items.push(item);
    await this.emit("response.output_item.added", { output_index: index, item });
    await this.emit("response.output_item.done", { output_index: index, item });
    this.pendingApprovals.push({
      id, serverLabel: event.tool.origin.label, name: event.tool.serverName, arguments: event.call.arguments, callId: reshapeId(event.call.id, "callId"),
    });
  }

  private async text(kind: OpenText["kind"], delta: string): Promise<void> {
    if (this.open?.kind !== kind) {
      await this.closeOpen();
      const open: OpenText = { kind, id: newItemId(kind === "message" ? "msg" : "rs"), index: this.items.length, text: "" };
      this.open = open;
      const item = kind === "message" ? messageItem(open.id, "", "in_progress") : { ...reasoningItem(open.id, ""), content: [] };
      this.items.push(item);
      await this.emit("response.output_item.added", { output_index: open.index, item });
      const part = kind === "message" ? outputTextPart("") : { type: "reasoning_text", text: "" };
      await this.emit("response.content_part.added", { item_id: open.id, output_index: open.index, content_index: 0, part });
    }
    const open = this.open!;
    open.text += delta;
    const where = { item_id: open.id, output_index: open.index, content_index: 0 };
    if (kind === "message") await this.emit("response.output_text.delta", { ...where, delta, logprobs: [] });
    else await this.emit("response.reasoning_text.delta", { ...where, delta });
  }

  private async closeOpen(): Promise<void> {
    const open = this.open;
    if (!open) return;
    this.open = undefined;
    const where = { item_id: open.id, output_index: open.index, content_index: 0 };
    let item: OutputItem;
    if (open.kind === "message") {
      await this.emit("response.output_text.done", { ...where, text: open.text, logprobs: [] });
      await this.emit("response.content_part.done", { ...where, part: outputTextPart(open.text) });
      item = messageItem(open.id, open.text, "completed");
    } else {
      await this.emit("response.reasoning_text.done", { ...where, text: open.text });
      await this.emit("response.content_part.done", { ...where, part: { type: "reasoning_text", text: open.text } });
      item = reasoningItem(open.id, open.text);
    }
    this.items[open.index] = item;
    await this.emit("response.output_item.done", { output_index: open.index, item });
  }

  private async callDelta(event: Extract<ChatEvent, { type: "tool_call_delta" }>): Promise<void> {
    let call = this.calls.get(event.index);
    if (!call) {
      await this.closeOpen();
      this.heldSpace = "";
      call = { id: newItemId("fc"), index: this.items.length, callId: event.id ?? newId("callId"), name: event.name ?? "" };
      this.calls.set(event.index, call);
      const item = functionCallItem(call.id, { id: call.callId, name: call.name }, "", "in_progress");
      this.items.push(item);
      await this.emit("response.output_item.added", { output_index: call.index, item });
    }
    if (event.arguments) await this.emit("response.function_call_arguments.delta", { item_id: call.id, output_index: call.index, delta: event.arguments });
  }

  private async callDone(index: number, args: string): Promise<void> {
    const call = this.calls.get(index);
    if (!call) return;
    await this.emit("response.function_call_arguments.done", { item_id: call.id, output_index: call.index, name: call.name, arguments: args });
    const item = functionCallItem(call.id, { id: call.callId, name: call.name }, args, "completed");
    this.items[call.index] = item;
    await this.emit("response.output_item.done", { output_index: call.index, item });
  }
}
