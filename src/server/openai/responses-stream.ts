// The streamed Responses API: a reply's chat events as OpenAI's event sequence. Each output item is
// announced (output_item.added), filled (content_part.added, then text, reasoning or argument deltas) and
// closed (….done, output_item.done) before the next opens; every event carries a sequence_number, and the
// stream ends with response.completed, response.incomplete (out of tokens) or response.failed.
import { newId } from "../../ids.ts";
import type { ChatEvent } from "../../generation/chat-events.ts";
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

export class ResponseEventWriter {
  private sequence = 0;
  private readonly items: OutputItem[] = [];
  private open: OpenText | undefined;
  private readonly calls = new Map<number, OpenCall>();
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

  /** Every event but `done` (see finish). */
  async push(event: Exclude<ChatEvent, { type: "done" }>): Promise<void> {
    switch (event.type) {
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
