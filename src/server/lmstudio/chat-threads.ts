// The conversations /api/v1/chat keeps (LM Studio's stateful chats): each stored response id maps to
// the whole conversation up to and including that response, so a later request can continue from any
// point (branching). In memory only; the oldest are dropped past a cap.
import { randomBytes } from "node:crypto";
import type { ChatMessage } from "../../chat/types.ts";

/** Conversations kept before the oldest is dropped. */
const MAX_THREADS = 1000;

export class ChatThreads {
  private readonly threads = new Map<string, ChatMessage[]>();

  /** The conversation up to a stored response, or undefined for an unknown id. */
  get(responseId: string): ChatMessage[] | undefined {
    return this.threads.get(responseId);
  }

  /** Stores a conversation and returns its new response id (`resp_` and 48 hex characters, as LM Studio's). */
  save(messages: ChatMessage[]): string {
    const id = `resp_${randomBytes(24).toString("hex")}`;
    this.threads.set(id, messages);
    if (this.threads.size > MAX_THREADS) this.threads.delete(this.threads.keys().next().value!);
    return id;
  }
}
