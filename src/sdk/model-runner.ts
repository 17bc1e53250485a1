// A model loaded in this process for conversations (the spec's ModelRunner).
import { Conversation } from "./conversation.ts";
import type { ChatMessage, PlainChatMessage } from "./chat-message.ts";
import type { LeapFunction, LeapFunctionInit } from "./functions.ts";
import { LocalBackend } from "./local-backend.ts";
import { LocalModel } from "./local-model.ts";

export interface ModelRunnerOptions {
  /** Context per conversation in tokens. Default: min(4096, the model's trained context). */
  contextSize?: number;
  /** Conversations that can generate at the same time. @default 2 */
  parallel?: number;
  threads?: number;
  gpuLayers?: number;
  /** A Jinja chat template that replaces the model's own. */
  chatTemplate?: string;
  /** Model store root for store names and pulls. */
  storeRoot?: string;
}

export class ModelRunner {
  private readonly backend: LocalBackend;

  private constructor(private readonly loaded: LocalModel) {
    this.backend = new LocalBackend(loaded);
  }

  /** Loads a GGUF path, a model store name or a Hugging Face `<org>/<model>` id; rejects if it cannot. */
  static async load(model: string, options: ModelRunnerOptions = {}): Promise<ModelRunner> {
    const loaded = new LocalModel(model, {
      parallel: options.parallel ?? 2,
      ...(options.contextSize !== undefined ? { contextPerSequence: options.contextSize } : {}),
      ...(options.threads !== undefined ? { threads: options.threads } : {}),
      ...(options.gpuLayers !== undefined ? { gpuLayers: options.gpuLayers } : {}),
      ...(options.chatTemplate !== undefined ? { chatTemplate: options.chatTemplate } : {}),
    }, options.storeRoot ? { storeRoot: options.storeRoot } : {});
    await loaded.engine();
    return new ModelRunner(loaded);
  }

  /** A new conversation, starting with a system message when `systemPrompt` is given. */
  createConversation(systemPrompt?: string): Conversation {
    return new Conversation(this.backend, systemPrompt ? [{ role: "system", content: systemPrompt }] : []);
  }

  /** A conversation that continues `history`; functions are not part of a history, so pass them again here or register them. */
  createConversationFromHistory(history: Array<ChatMessage | PlainChatMessage>, functions: Array<LeapFunction | LeapFunctionInit> = []): Conversation {
    return new Conversation(this.backend, history, functions);
  }

  /** Frees the model; conversations of this runner then answer with Error. */
  unload(): Promise<void> {
    return this.loaded.dispose();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.unload();
  }
}
