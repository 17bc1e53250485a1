// A conversation with a model (the spec's Conversation): its history, the functions the model may
// call, and generateResponse, which streams MessageResponses. Where the model runs (in this process or
// behind an OpenAI-compatible server) is the backend's business.
import { ChatMessage, type PlainChatMessage } from "./chat-message.ts";
import { toLeapFunction, type LeapFunction, type LeapFunctionInit } from "./functions.ts";
import { GenerationOptions, type GenerationOptionsInit } from "./generation-options.ts";
import { Complete, GenerationError, type MessageResponse } from "./message-response.ts";

export interface GenerationRequest {
  messages: ChatMessage[];
  functions: LeapFunction[];
  options: GenerationOptions;
  signal: AbortSignal;
}

/** Runs one generation; a thrown error becomes a MessageResponse.Error. Ends with Complete or Error. */
export interface ConversationBackend {
  generate(request: GenerationRequest): AsyncGenerator<MessageResponse>;
}

export interface GenerateResponseExtras {
  /** Aborting it stops generation; the stream then ends with an Error. */
  signal?: AbortSignal;
}

export class Conversation {
  private readonly messages: ChatMessage[];
  private readonly functions = new Map<string, LeapFunction>();
  private generating = false;

  constructor(private readonly backend: ConversationBackend, history: Array<ChatMessage | PlainChatMessage> = [], functions: Array<LeapFunction | LeapFunctionInit> = []) {
    this.messages = history.map((message) => ChatMessage.from(message));
    for (const fn of functions) this.registerFunction(fn);
  }

  /** The messages so far (a copy): the system prompt, then each exchange once it completed. */
  get history(): ChatMessage[] {
    return [...this.messages];
  }

  /** The functions registered so far. */
  get registeredFunctions(): LeapFunction[] {
    return [...this.functions.values()];
  }

  /** Lets the model call `fn`; a function of the same name is replaced. Throws InvalidFunctionError for a bad definition. */
  registerFunction(fn: LeapFunction | LeapFunctionInit): void {
    const definition = toLeapFunction(fn);
    this.functions.set(definition.name, definition);
  }

  /**
   * Adds `message` (if given) and streams the model's reply. Without a message, the model continues
   * from the history as it is (for instance after a tool message). The user message and the reply join
   * the history once the reply is complete. Failures arrive as MessageResponse.Error; the stream never throws.
   */
  async *generateResponse(message?: ChatMessage | PlainChatMessage | string, options?: GenerationOptions | GenerationOptionsInit, extras: GenerateResponseExtras = {}): AsyncGenerator<MessageResponse> {
    if (this.generating) {
      yield new GenerationError("Cannot generate: this conversation is already generating a response");
      return;
    }
    this.generating = true;
    try {
      let added: ChatMessage | undefined;
      let request: GenerationRequest;
      const controller = new AbortController();
      const onAbort = () => controller.abort(extras.signal?.reason);
      try {
        added = message === undefined ? undefined : typeof message === "string" ? ChatMessage.text("user", message) : ChatMessage.from(message);
        const messages = added ? [...this.messages, added] : [...this.messages];
        if (messages.length === 0) throw new TypeError("Cannot generate: the conversation is empty and no message was given");
        request = { messages, functions: this.registeredFunctions, options: GenerationOptions.from(options), signal: controller.signal };
      } catch (error) {
        yield new GenerationError((error as Error).message, error);
        return;
      }
      extras.signal?.addEventListener("abort", onAbort);
      const replies = this.backend.generate(request);
      try {
        for (;;) {
          let next: IteratorResult<MessageResponse>;
          try {
            next = await replies.next();
          } catch (error) {
            yield new GenerationError(controller.signal.aborted ? "Generation was aborted" : (error as Error).message, error);
            return;
          }
          if (next.done) return;
          const response = next.value;
          if (response instanceof Complete) {
            if (added) this.messages.push(added);
            this.messages.push(response.fullMessage);
          }
          yield response;
          if (response instanceof Complete || response instanceof GenerationError) return;
        }
      } finally {
        extras.signal?.removeEventListener("abort", onAbort);
        // The caller stopped reading early: end the backend's generation (it cancels its request).
        controller.abort();
        await replies.return(undefined);
      }
    } finally {
      this.generating = false;
    }
  }
}
