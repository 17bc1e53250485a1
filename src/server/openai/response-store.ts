// The responses a listener keeps for `previous_response_id`: each one's conversation (without its
// instructions, which OpenAI does not carry over) up to and including its reply. Bounded by count and
// by size; the oldest go first. Held in memory only: a restart forgets them. Each response belongs to
// the API key that made it (OpenAI scopes response ids to the project): another owner's id reads as
// unknown, so it is the same 404.
import type { ChatMessage } from "../../chat/types.ts";

export interface ResponseStoreLimits {
  /** Most responses kept. */
  maxResponses: number;
  /** Most bytes kept (message text as UTF-16 plus image bytes, roughly). */
  maxBytes: number;
}

/** An MCP call of a stored response that waits for the client's approval (an mcp_approval_request item). */
export interface PendingApproval {
  /** The mcp_approval_request item's id. */
  id: string;
  serverLabel: string;
  /** The tool's name on its server. */
  name: string;
  arguments: Record<string, unknown>;
  /** The model's call id. */
  callId: string;
}

export const DEFAULT_RESPONSE_STORE_LIMITS: ResponseStoreLimits = { maxResponses: 1000, maxBytes: 256 * 1024 * 1024 };

function sizeOf(messages: ChatMessage[]): number {
  let bytes = 0;
  for (const m of messages) {
    bytes += 2 * ((m.content?.length ?? 0) + (m.reasoning_content?.length ?? 0)) + 64;
    for (const image of m.images ?? []) bytes += image.byteLength;
    for (const call of m.tool_calls ?? []) bytes += 2 * JSON.stringify(call).length;
  }
  return bytes;
}

export class ResponseStore {
  private readonly entries = new Map<string, { owner: string; messages: ChatMessage[]; pending: PendingApproval[]; bytes: number }>();
  private bytes = 0;
  private readonly limits: ResponseStoreLimits;

  constructor(limits: Partial<ResponseStoreLimits> = {}) {
    this.limits = { ...DEFAULT_RESPONSE_STORE_LIMITS, ...limits };
  }

  /** The conversation of a response `owner` stored, or undefined when it is unknown (never stored, evicted, or another's). */
  get(owner: string, id: string): ChatMessage[] | undefined {
    const entry = this.entries.get(id);
    return entry?.owner === owner ? entry.messages : undefined;
  }

  /** The approvals a stored response of `owner` asked for; empty when it is unknown. */
  pendingApprovals(owner: string, id: string): PendingApproval[] {
    const entry = this.entries.get(id);
    return entry?.owner === owner ? entry.pending : [];
  }

  /** Stores a response for `owner` (keyOwner of the request), with the MCP calls it left waiting for approval. */
  put(owner: string, id: string, messages: ChatMessage[], pending: PendingApproval[] = []): void {
    const bytes = sizeOf(messages) + 2 * JSON.stringify(pending).length;
    if (bytes > this.limits.maxBytes) return;
    this.delete(id);
    this.entries.set(id, { owner, messages, pending, bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= this.limits.maxResponses && this.bytes <= this.limits.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }

  private delete(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.bytes -= entry.bytes;
  }
}
