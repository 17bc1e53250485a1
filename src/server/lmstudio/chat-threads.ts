// The conversations /api/v1/chat keeps (LM Studio's stateful chats): each stored response id maps to
// the whole conversation up to and including that response, so a later request can continue from any
// point (branching). In memory only, in a store bounded as /v1/responses' is (count and bytes, the
// oldest dropped first), where a thread refers to the images of the requests that brought them: the
// threads of one conversation share those bytes. Each thread belongs to the API key that made it:
// another owner's id reads as unknown.
import { randomBytes } from "node:crypto";
import type { ChatMessage } from "../../chat/types.ts";
import { ResponseStore, type ResponseStoreLimits } from "../openai/response-store.ts";

export class ChatThreads {
  private readonly store: ResponseStore;

  constructor(limits: Partial<ResponseStoreLimits> = {}) {
    this.store = new ResponseStore(limits);
  }

  /** The conversation up to a response `owner` stored, or undefined for an unknown id (or another owner's). */
  get(owner: string, responseId: string): ChatMessage[] | undefined {
    return this.store.get(owner, responseId);
  }

  /**
   * Stores a conversation for `owner` (keyOwner of the request) and returns its new response id (`resp_`
   * and 48 hex characters, as LM Studio's). A conversation larger than the whole bound is not kept: its
   * id then reads as unknown.
   */
  save(owner: string, messages: ChatMessage[]): string {
    const id = `resp_${randomBytes(24).toString("hex")}`;
    this.store.put(owner, id, messages);
    return id;
  }

  /** Bytes the threads hold (text, and each image once). */
  get heldBytes(): number {
    return this.store.heldBytes;
  }
}
