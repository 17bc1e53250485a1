// The Conversation API against an OpenAI-compatible server instead of a model in this process.
// The server parses the model's calls, so a conversation's functionCallParser option has no effect.
import OpenAI from "openai";
import type { ChatMessage, PlainChatMessage } from "./chat-message.ts";
import { Conversation } from "./conversation.ts";
import type { LeapFunction, LeapFunctionInit } from "./functions.ts";
import { RemoteBackend } from "./remote-backend.ts";

export interface RemoteModelRunnerOptions {
  /** The server's OpenAI base URL, e.g. "http://127.0.0.1:8000/v1". */
  baseURL: string;
  /** Sent as a Bearer token; servers without keys take any value. @default "none" */
  apiKey?: string;
  /** The model name the server knows. */
  model: string;
  /** Retries of a failed request (the openai client's). @default 0 */
  maxRetries?: number;
  /** Per-request timeout in milliseconds. @default 600000 */
  timeoutMs?: number;
  /**
   * Lets a web page use it (the openai client refuses browsers by default): whoever can read the page
   * can read the key it holds. @default false
   */
  dangerouslyAllowBrowser?: boolean;
}

export class RemoteModelRunner {
  private readonly backend: RemoteBackend;

  constructor(options: RemoteModelRunnerOptions) {
    if (!options?.baseURL) throw new TypeError("Cannot create RemoteModelRunner: baseURL is required");
    if (!options.model) throw new TypeError("Cannot create RemoteModelRunner: model is required");
    const client = new OpenAI({
      baseURL: options.baseURL, apiKey: options.apiKey ?? "none", maxRetries: options.maxRetries ?? 0, timeout: options.timeoutMs ?? 600_000,
      dangerouslyAllowBrowser: options.dangerouslyAllowBrowser ?? false,
    });
    this.backend = new RemoteBackend(client, options.model);
  }

  createConversation(systemPrompt?: string): Conversation {
    return new Conversation(this.backend, systemPrompt ? [{ role: "system", content: systemPrompt }] : []);
  }

  createConversationFromHistory(history: Array<ChatMessage | PlainChatMessage>, functions: Array<LeapFunction | LeapFunctionInit> = []): Conversation {
    return new Conversation(this.backend, history, functions);
  }
}
