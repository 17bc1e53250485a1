// The conversations /api/v1/chat keeps (LM Studio's stateful chats): each stored response id maps to
// the whole conversation up to and including that response, so a later request can continue from any
// point (branching). In memory only; the oldest are dropped past a cap. Each thread belongs to the API
// key that made it: another owner's id reads as unknown.
import { randomBytes } from "node:crypto";
import type { ChatMessage } from "../../chat/types.ts";

/** Conversations kept before the oldest is dropped. */
const MAX_THREADS = 1000;

export class ChatThreads {
  private readonly threads = new Map<string, { owner: string; messages: ChatMessage[] }>();

  /** The conversation up to a response `owner` stored, or undefined for an unknown id (or another owner's). */
  get(owner: string, responseId: string): ChatMessage[] | undefined {
    const thread = this.threads.get(responseId);
    return thread?.owner === owner ? thread.messages : undefined;
  }

  /**
   * Stores a conversation for `owner` (keyOwner of the request) and returns its new response id (`resp_`
   * and 48 hex characters, as LM Studio's).
   */
  save(owner: string, messages: ChatMessage[]): string {
    const id = `resp_${randomBytes(24).toString("hex")}`;
    this.threads.set(id, { owner, messages });
    if (this.threads.size > MAX_THREADS) this.threads.delete(this.threads.keys().next().value!);
    return id;
  }
}
