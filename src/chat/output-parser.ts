// What an output parser makes of a choice's generated text (answer text, reasoning, tool calls), and the
// interface the readers in chat/ implement (reasoning.ts, tool-calls/tool-call-output.ts). The
// orchestrator (src/generation) chains them per request.

/** A complete tool call as the model made it. `arguments` is the parsed object. */
export interface ParsedToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** What an output parser makes of generated text. */
export type ChatOutput =
  | { type: "content"; text: string }
  | { type: "reasoning"; text: string }
  /** Part of call `index` as it streams: the first delta of a call carries its id and name, later ones argument text. */
  | { type: "tool_call_delta"; index: number; id?: string; name?: string; arguments: string }
  /** Call `index` once it is complete. Sent after its deltas. */
  | { type: "tool_call"; index: number; call: ParsedToolCall };

/**
 * Reads a choice's generated text as it streams (one parser per choice). Text that may still turn out
 * to be markup (a tool-call marker, `<think>`) is held back until it is known, and released by `finish`.
 */
export interface OutputParser {
  push(text: string): ChatOutput[];
  finish(): ChatOutput[];
}

/** Everything is answer text: no reasoning split, no tool calls. */
export class PlainTextOutput implements OutputParser {
  push(text: string): ChatOutput[] {
    return text ? [{ type: "content", text }] : [];
  }

  finish(): ChatOutput[] {
    return [];
  }
}

/**
 * Two readers in a row: the answer text of `first` is read again by `second`, so reasoning is split off
 * before tool calls are looked for (calls inside reasoning are not calls).
 */
export class ChainedOutput implements OutputParser {
  constructor(private readonly first: OutputParser, private readonly second: OutputParser) {}

  push(text: string): ChatOutput[] {
    return this.relay(this.first.push(text));
  }

  finish(): ChatOutput[] {
    return [...this.relay(this.first.finish()), ...this.second.finish()];
  }

  private relay(items: ChatOutput[]): ChatOutput[] {
    return items.flatMap((item) => (item.type === "content" ? this.second.push(item.text) : [item]));
  }
}
