// Conversations kept in the browser (localStorage), newest first.

export interface ChatMessage {
  role: "user" | "assistant" | "system";
  content: string;
  reasoning?: string;
  /** data: or http(s) URLs of attached images */
  images?: string[];
  /** a speech model's answer: a data: URL of its WAV */
  audio?: string;
  /** e.g. "12 tokens · 8.1 tok/s" or "stopped" */
  note?: string;
  error?: string;
}

export interface Conversation {
  id: string;
  title: string;
  model: string;
  messages: ChatMessage[];
  updatedAt: number;
}

const STORAGE = "llamux.conversations";

export function loadConversations(): Conversation[] {
  try {
    return JSON.parse(localStorage.getItem(STORAGE) ?? "[]") as Conversation[];
  } catch {
    return [];
  }
}

/** Saves what fits: when the browser's quota is full, the oldest conversations go first. */
export function saveConversations(conversations: Conversation[]): void {
  let kept = conversations;
  while (kept.length > 0) {
    try {
      localStorage.setItem(STORAGE, JSON.stringify(kept));
      return;
    } catch {
      kept = kept.slice(0, -1);
    }
  }
  localStorage.removeItem(STORAGE);
}

export function newConversation(model: string): Conversation {
  return { id: crypto.randomUUID?.() ?? String(Date.now() + Math.random()), title: "New chat", model, messages: [], updatedAt: Date.now() };
}
