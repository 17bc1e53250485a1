// The streaming reader of tool calls in a reply, for any call format. Text outside call blocks streams
// as content at once, except what could still be the start of a marker. A block is held until it closes
// and is then parsed whole: its calls go out as tool-call events, or, if it does not parse, its exact
// text goes out as content (a failed call is never dropped and never half-sent). Whitespace at the edges
// of the text, where it only separates it from calls, is left out: a reply of calls alone has no content.
import { newId } from "../../ids.ts";
import type { ChatOutput, OutputParser, ParsedToolCall } from "../output-parser.ts";
import { logger } from "../../log.ts";
import { BlockScanner } from "./block-scanner.ts";
import type { ToolCallFormat } from "./formats.ts";
import type { PythonicCall } from "./literal-parser.ts";
import { ToolCallSyntaxError } from "./syntax-error.ts";

const log = logger("chat");

export interface ToolCallOutputOptions {
  /** At most one call (parallel_tool_calls: false); later ones are dropped, as vLLM does. */
  single?: boolean;
  /** Makes a call's id. Default: vLLM's `chatcmpl-tool-<32 hex digits>`. */
  newId?: () => string;
}

export const vllmToolCallId = () => newId("toolCall");

/** Length of the longest end of `text` that is the beginning of `marker` (and not all of it). */
export function partialMarkerLength(text: string, marker: string): number {
  for (let length = Math.min(marker.length - 1, text.length); length > 0; length--) {
    if (text.endsWith(marker.slice(0, length))) return length;
  }
  return 0;
}

const isSpace = (text: string) => text.trim() === "";

export class ToolCallOutput implements OutputParser {
  /** "text": a block may open; "block": inside one; "plain": no block can open any more. */
  private mode: "text" | "block" | "plain" = "text";
  /** Text not yet handed out: held text in the text modes, the block so far inside one. */
  private pending = "";
  /** Whitespace held back until it is known whether text follows it (then it is sent) or only calls. */
  private space = "";
  /** Some content has been sent. */
  private sentText = false;
  /** The whitespace dropped before the open block, given back if the block turns out not to be calls. */
  private spaceBeforeBlock = "";
  private scanner: BlockScanner | undefined;
  private calls = 0;
  private readonly newId: () => string;

  constructor(private readonly format: ToolCallFormat, private readonly options: ToolCallOutputOptions = {}) {
    this.newId = options.newId ?? vllmToolCallId;
  }

  push(text: string): ChatOutput[] {
    this.pending += text;
    return this.drain(false);
  }

  finish(): ChatOutput[] {
    const out = this.drain(true);
    if (this.space && this.calls === 0) out.push({ type: "content", text: this.space });
    this.space = "";
    return out;
  }

  private drain(final: boolean): ChatOutput[] {
    const out: ChatOutput[] = [];
    for (;;) {
      if (this.mode === "block") {
        const end = this.scanner!.scan(this.pending);
        if (!end && !final) return out;
        const bodyLength = end?.bodyLength ?? this.pending.length;
        const closeLength = end?.closeLength ?? 0;
        this.closeBlock(this.pending.slice(0, bodyLength), this.pending.slice(bodyLength, bodyLength + closeLength), out);
        this.pending = this.pending.slice(bodyLength + closeLength);
        this.mode = this.format.onlyAtStart ? "plain" : "text";
        continue;
      }
      const start = this.mode === "text" ? this.blockStart(final) : undefined;
      if (start === "wait") return out;
      if (start === undefined) {
        const hold = final || this.mode === "plain" ? 0 : partialMarkerLength(this.pending, this.format.start);
        this.text(this.pending.slice(0, this.pending.length - hold), out);
        this.pending = this.pending.slice(this.pending.length - hold);
        return out;
      }
      this.text(this.pending.slice(0, start), out);
      this.spaceBeforeBlock = this.space;
      if (!this.sentText) this.space = ""; // nothing but calls so far
      // A bare list is its own block text; a marked block's text starts after the marker.
      this.pending = this.pending.slice(this.format.end === undefined ? start : start + this.format.start.length);
      this.scanner = new BlockScanner(this.format.end);
      this.mode = "block";
    }
  }

  /** Where a block opens in the pending text; "wait" while that is not yet known. */
  private blockStart(final: boolean): number | "wait" | undefined {
    const { start, onlyAtStart } = this.format;
    if (!onlyAtStart) {
      const at = this.pending.indexOf(start);
      return at >= 0 ? at : undefined;
    }
    const first = this.pending.search(/\S/);
    if (first < 0) return final ? undefined : "wait";
    const rest = this.pending.slice(first);
    if (rest.startsWith(start)) return first;
    if (!final && start.startsWith(rest)) return "wait";
    this.mode = "plain";
    return undefined;
  }

  /** Text outside blocks; whitespace at its end is held, and at its start dropped when calls came first. */
  private text(text: string, out: ChatOutput[]): void {
    if (!text) return;
    let combined = this.space + text;
    if (isSpace(combined)) {
      this.space = combined;
      return;
    }
    if (!this.sentText && this.calls > 0) combined = combined.trimStart();
    const body = combined.trimEnd();
    this.space = combined.slice(body.length);
    this.sentText = true;
    out.push({ type: "content", text: body });
  }

  private closeBlock(body: string, close: string, out: ChatOutput[]): void {
    let calls: PythonicCall[];
    try {
      calls = this.format.parseBlock(body);
    } catch (error) {
      if (!(error instanceof ToolCallSyntaxError)) throw error;
      log.debug(`${error.message}; the text is kept as content`);
      this.space = this.spaceBeforeBlock;
      this.text((this.format.end === undefined ? "" : this.format.start) + body + close, out);
      return;
    }
    for (const parsed of calls) {
      if (this.options.single && this.calls > 0) break;
      const index = this.calls++;
      const call: ParsedToolCall = { id: this.newId(), name: parsed.name, arguments: parsed.arguments };
      out.push({ type: "tool_call_delta", index, id: call.id, name: call.name, arguments: "" });
      out.push({ type: "tool_call_delta", index, arguments: JSON.stringify(call.arguments) });
      out.push({ type: "tool_call", index, call });
    }
  }
}
