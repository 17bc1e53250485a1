// The streamed Messages API: a reply's chat events as Anthropic's event sequence. message_start (and a
// ping, and one more after each step of a long prompt), then each content block in turn: content_block_start, its deltas (thinking_delta, text_delta,
// input_json_delta), content_block_stop; then message_delta with the stop reason and usage, and
// message_stop. A failure mid-stream is an `error` event.
import type { ChatEvent } from "../../generation/chat-events.ts";
import type { SendEvent } from "../named-sse.ts";
import { anthropicErrorType } from "./errors.ts";
import { messageBody, messagesUsage, stopReasonOf, textBlock, thinkingBlock, toolUseBlock } from "./messages-output.ts";

type BlockKind = "thinking" | "text" | "tool_use";

export class MessageEventWriter {
  private index = -1;
  private open: BlockKind | undefined;
  /** Whitespace-only text, held until real text follows (text that only pads tool calls is dropped). */
  private heldSpace = "";

  constructor(private readonly id: string, private readonly model: string, private readonly stopSequences: string[], private readonly send: SendEvent) {}

  async start(promptTokens: number): Promise<void> {
    const usage = { input_tokens: promptTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 };
    await this.send({ type: "message_start", message: messageBody(this.id, this.model, [], null, usage) });
    await this.send({ type: "ping" });
  }

  /** A `ping` while the prompt is still processed: it keeps clients and proxies from timing out. */
  async ping(): Promise<void> {
    await this.send({ type: "ping" });
  }

  async push(event: ChatEvent): Promise<void> {
    switch (event.type) {
      case "reasoning":
        await this.openBlock("thinking", thinkingBlock(""));
        return this.delta({ type: "thinking_delta", thinking: event.text });
      case "content":
        if (!event.text) return;
        if (!event.text.trim() && this.open !== "text") {
          this.heldSpace += event.text;
          return;
        }
        await this.openBlock("text", textBlock(""));
        await this.delta({ type: "text_delta", text: this.heldSpace + event.text });
        this.heldSpace = "";
        return;
      case "tool_call_delta":
        if (event.id !== undefined) {
          this.heldSpace = "";
          await this.openBlock("tool_use", toolUseBlock({ id: event.id, name: event.name ?? "" }, {}), true);
        }
        if (event.arguments) await this.delta({ type: "input_json_delta", partial_json: event.arguments });
        return;
      case "tool_call":
        return this.closeBlock();
      case "done":
        if (this.index < 0 && this.heldSpace) {
          await this.openBlock("text", textBlock(""));
          await this.delta({ type: "text_delta", text: this.heldSpace });
        }
        await this.closeBlock();
        await this.send({ type: "message_delta", delta: stopReasonOf(event, this.stopSequences), usage: messagesUsage(event.usage) });
        await this.send({ type: "message_stop" });
        return;
      case "error":
        await this.send({ type: "error", error: { type: anthropicErrorType(event.code === "busy" ? 503 : 500), message: event.message } });
    }
  }

  private async openBlock(kind: BlockKind, block: Record<string, unknown>, always = false): Promise<void> {
    if (this.open === kind && !always) return;
    await this.closeBlock();
    this.index++;
    this.open = kind;
    await this.send({ type: "content_block_start", index: this.index, content_block: block });
  }

  private async closeBlock(): Promise<void> {
    if (this.open === undefined) return;
    this.open = undefined;
    await this.send({ type: "content_block_stop", index: this.index });
  }

  private delta(delta: Record<string, unknown>): Promise<void> {
    return this.send({ type: "content_block_delta", index: this.index, delta });
  }
}
