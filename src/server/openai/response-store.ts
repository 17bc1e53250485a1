// The responses a listener keeps for `previous_response_id`: each one's conversation (without its
// instructions, which OpenAI does not carry over) up to and including its reply. Bounded by count and
// by size; the oldest go first. Held in memory only: a restart forgets them. Each response belongs to
// the API key that made it (OpenAI scopes response ids to the project): another owner's id reads as
// unknown, so it is the same 404. A conversation refers to the images and audio clips of the requests
// that brought them: the responses of one conversation (and its branches) share those bytes, so each
// clip counts once, for as long as any response refers to it.
import type { ChatMessage } from "../../chat/types.ts";

export interface ResponseStoreLimits {
  /** Most responses kept. */
  maxResponses: number;
  /** Most bytes kept (message text as UTF-16 plus the bytes of the images and audio clips, roughly). */
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

/** The bytes of a conversation's text (as UTF-16) and calls; its media are counted apart, once each. */
function textSizeOf(messages: ChatMessage[]): number {
  let bytes = 0;
  for (const m of messages) {
    bytes += 2 * ((m.content?.length ?? 0) + (m.reasoning_content?.length ?? 0)) + 64;
    for (const call of m.tool_calls ?? []) bytes += 2 * JSON.stringify(call).length;
  }
  return bytes;
}

/** The distinct images and audio clips a conversation refers to. */
function mediaOf(messages: ChatMessage[]): Set<Uint8Array> {
  const media = new Set<Uint8Array>();
  for (const m of messages) for (const clip of [...(m.images ?? []), ...(m.audio ?? [])]) media.add(clip);
  return media;
}

interface StoredResponse {
  owner: string;
  messages: ChatMessage[];
  pending: PendingApproval[];
  /** Its own bytes: text, calls and pending approvals. */
  bytes: number;
  media: Set<Uint8Array>;
}

export class ResponseStore {
  private readonly entries = new Map<string, StoredResponse>();
  /** How many stored responses refer to each image or audio clip. */
  private readonly mediaRefs = new Map<Uint8Array, number>();
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
    const bytes = textSizeOf(messages) + 2 * JSON.stringify(pending).length;
    const media = mediaOf(messages);
    let mediaBytes = 0;
    for (const clip of media) mediaBytes += clip.byteLength;
    if (bytes + mediaBytes > this.limits.maxBytes) return;
    this.delete(id);
    this.entries.set(id, { owner, messages, pending, bytes, media });
    this.bytes += bytes;
    for (const clip of media) this.refer(clip, 1);
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.limits.maxResponses && this.bytes <= this.limits.maxBytes) break;
      this.delete(oldest);
    }
  }

  /** Bytes held: the responses' own and their media's, each clip once. */
  get heldBytes(): number {
    return this.bytes;
  }

  private refer(clip: Uint8Array, change: 1 | -1): void {
    const count = (this.mediaRefs.get(clip) ?? 0) + change;
    if (count === 0) this.mediaRefs.delete(clip);
    else this.mediaRefs.set(clip, count);
    if (count === 0 || (change === 1 && count === 1)) this.bytes += change * clip.byteLength;
  }

  private delete(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.bytes -= entry.bytes;
    for (const clip of entry.media) this.refer(clip, -1);
  }
}
