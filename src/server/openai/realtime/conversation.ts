// The items of one session's conversation (messages, function calls and their outputs, MCP listings,
// calls and approvals), in order, and how they become the chat messages of a reply. User audio is kept as
// a WAV of what was committed: a model that hears gets it as audio, any other model the transcript of it.
import type { ChatMessage, ToolCall } from "../../../chat/types.ts";
import { newId } from "../../../ids.ts";
import { badRequest } from "../../api-error.ts";
import { ClientEventError } from "./client-events.ts";

/** Most items one conversation keeps; older ones are dropped first (the reply's prompt drops more if it must). */
export const MAX_CONVERSATION_ITEMS = 1024;

export interface ContentPart {
  type: "input_text" | "input_audio" | "output_text" | "output_audio";
  text?: string;
  /** The words of audio: of a user's clip once transcribed, of a reply as it is spoken. */
  transcript?: string | null;
  /** A user's clip as a WAV file. */
  wav?: Uint8Array;
  /** Milliseconds of a reply's audio sent so far. */
  audioMs?: number;
}

export type McpItemType = "mcp_list_tools" | "mcp_call" | "mcp_approval_request" | "mcp_approval_response";

export interface Item {
  id: string;
  type: "message" | "function_call" | "function_call_output" | McpItemType;
  role?: "user" | "assistant" | "system";
  status: "completed" | "incomplete" | "in_progress";
  content?: ContentPart[];
  call_id?: string;
  name?: string;
  arguments?: string;
  output?: string;
  /** Settles when the item's audio has a transcript (or the transcription failed). */
  transcribed?: Promise<void>;
  /** An MCP item's fields as events carry them (its id and status aside). */
  mcp?: Record<string, unknown>;
}

const isMcp = (item: Item) => item.mcp !== undefined;

export const newItemId = () => `item_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
export const newCallId = () => newId("callId");

export class Conversation {
  readonly items: Item[] = [];

  find(id: string): Item | undefined {
    return this.items.find((item) => item.id === id);
  }

  /** Adds the item after `previousId` (null: first; undefined: last); returns the id of the item before it. */
  add(item: Item, previousId?: string | null): string | null {
    if (this.find(item.id)) throw new ClientEventError(`Item with item_id '${item.id}' already exists`, "item.id", "item_already_exists");
    let at = this.items.length;
    if (previousId === null || previousId === "root") at = 0;
    else if (previousId !== undefined) {
      const index = this.items.findIndex((existing) => existing.id === previousId);
      if (index < 0) throw new ClientEventError(`Error adding item: the previous item with id '${previousId}' does not exist`, "previous_item_id", "item_not_found");
      at = index + 1;
    }
    this.items.splice(at, 0, item);
    if (this.items.length > MAX_CONVERSATION_ITEMS) this.items.shift();
    return this.items[this.items.indexOf(item) - 1]?.id ?? null;
  }

  delete(id: string): void {
    const index = this.items.findIndex((item) => item.id === id);
    if (index < 0) throw new ClientEventError(`Error deleting item: the item with id '${id}' does not exist`, "item_id", "item_not_found");
    this.items.splice(index, 1);
  }

  lastId(): string | null {
    return this.items.at(-1)?.id ?? null;
  }
}

/** The item as events carry it (never its audio bytes, as OpenAI leaves them out). */
export function itemWire(item: Item): Record<string, unknown> {
  if (isMcp(item)) return { id: item.id, ...item.mcp };
  const base = { id: item.id, object: "realtime.item", type: item.type, status: item.status };
  if (item.type === "function_call") return { ...base, call_id: item.call_id, name: item.name, arguments: item.arguments ?? "" };
  if (item.type === "function_call_output") return { ...base, call_id: item.call_id, output: item.output ?? "" };
  return {
    ...base, role: item.role,
    content: (item.content ?? []).map((part) => {
      if (part.type === "input_audio" || part.type === "output_audio") return { type: part.type, transcript: part.transcript ?? null };
      return { type: part.type, text: part.text ?? "" };
    }),
  };
}

/** Waits until every user clip among `items` has its transcript, where the model needs words rather than audio. */
export async function transcriptsOf(items: Item[]): Promise<void> {
  await Promise.all(items.map((item) => item.transcribed));
}

/**
 * The conversation as chat messages: `instructions` first as the system message, then each item. A model
 * that hears gets user clips as audio; any other gets their transcripts, and a clip without one is an error.
 */
export function chatMessages(instructions: string, items: Item[], hears: boolean): ChatMessage[] {
  const messages: ChatMessage[] = instructions ? [{ role: "system", content: instructions }] : [];
  for (const item of items) {
    if (item.type === "mcp_call") {
      // a call the server ran: the model reads it as its own call and the tool's result
      const { name, arguments: args, output, error } = item.mcp as { name: string; arguments: string; output?: string | null; error?: { message?: string } | null };
      messages.push({ role: "assistant", content: null, tool_calls: [{ id: item.id, type: "function", function: { name, arguments: args || "{}" } }] });
      messages.push({ role: "tool", tool_call_id: item.id, content: output ?? `Error: ${error?.message ?? "the call did not run"}` });
      continue;
    }
    // listings and approvals are the client's business; an approved call shows as its mcp_call
    if (isMcp(item)) continue;
    if (item.type === "function_call") {
      const call: ToolCall = { id: item.call_id!, type: "function", function: { name: item.name!, arguments: item.arguments ?? "{}" } };
      const last = messages.at(-1);
      if (last?.role === "assistant" && last.tool_calls) last.tool_calls.push(call);
      else messages.push({ role: "assistant", content: null, tool_calls: [call] });
      continue;
    }
    if (item.type === "function_call_output") {
      messages.push({ role: "tool", tool_call_id: item.call_id!, content: item.output ?? "" });
      continue;
    }
    const texts: string[] = [];
    const audio: Uint8Array[] = [];
    for (const part of item.content ?? []) {
      if (part.type === "input_audio" && part.wav && hears) audio.push(part.wav);
      else if (part.type === "input_audio" || part.type === "output_audio") {
        if (part.transcript === null || part.transcript === undefined) {
          if (part.type === "input_audio") throw badRequest(`Item '${item.id}' holds audio this model cannot hear, and no transcript of it: set audio.input.transcription.model to a model that takes audio`, "session.audio.input.transcription");
          continue;
        }
        texts.push(part.transcript);
      } else texts.push(part.text ?? "");
    }
    messages.push({ role: item.role ?? "user", content: texts.join("\n"), ...(audio.length ? { audio } : {}) });
  }
  return messages;
}
