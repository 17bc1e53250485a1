// Answers a generation in Ollama's way: an NDJSON stream of chunks ending with a `done: true` object,
// or (stream: false) that last object holding the whole text. /api/generate and /api/chat differ only
// in how a piece of output is shaped, which their NativeShape says.
import type { Context } from "hono";
import type { RequestUsage, TokenLogprobs } from "../../engine/types.ts";
import type { ChatChoice, ChatResult } from "../../generation/chat.ts";
import type { ChatEvent } from "../../generation/chat-events.ts";
import type { ParsedToolCall } from "../../chat/output-parser.ts";
import { toApiError } from "../api-error.ts";
import { ndjsonResponse, type SendLine } from "./ndjson.ts";

/** Output to put on the wire: streamed as it comes, or all of it at the end. */
export interface ResponsePiece {
  content: string;
  thinking: string;
  toolCalls: Array<{ index: number; call: ParsedToolCall }>;
  logprobs: TokenLogprobs[];
}

export interface FinishedGeneration {
  doneReason: "stop" | "length";
  usage: RequestUsage;
  /** The whole answer text, streamed or not (/api/generate's `context` needs it). */
  content: string;
}

export interface NativeShape {
  /** A `done: false` chunk. */
  chunk(piece: ResponsePiece): Record<string, unknown>;
  /** The `done: true` object; in a stream `piece` is empty, otherwise it holds the whole output. */
  final(piece: ResponsePiece, finished: FinishedGeneration): Promise<Record<string, unknown>> | Record<string, unknown>;
}

const emptyPiece = (): ResponsePiece => ({ content: "", thinking: "", toolCalls: [], logprobs: [] });

/** Ollama's logprobs entries: token, logprob, bytes, and the top alternatives. */
export function nativeLogprobs(entries: TokenLogprobs[]) {
  const entry = (t: { text: string; logprob: number }) => ({
    token: t.text, logprob: Number.isFinite(t.logprob) ? t.logprob : -9999, bytes: Array.from(Buffer.from(t.text, "utf8")),
  });
  return entries.map((e) => ({ ...entry(e), ...(e.top.length ? { top_logprobs: e.top.map(entry) } : {}) }));
}

/** The `done: true` object of a reply read whole (stream: false), holding all of its output. */
export function nativeReply(result: ChatResult, shape: NativeShape): Promise<Record<string, unknown>> | Record<string, unknown> {
  const piece: ResponsePiece = {
    content: result.content, thinking: result.reasoning, logprobs: result.logprobs,
    toolCalls: result.toolCalls.map((call, index) => ({ index, call })),
  };
  const doneReason = result.finishReason === "length" ? "length" : "stop";
  return shape.final(piece, { doneReason, usage: result.usage, content: result.content });
}

/**
 * Sends a reply's events as `done: false` chunks, then the `done: true` object (nothing after a cancel,
 * an `{"error"}` line after an engine error). Tells `reportUsage` the usage of a reply that ends.
 */
export async function sendNativeChunks(events: AsyncIterable<ChatEvent>, shape: NativeShape, send: SendLine, reportUsage: (usage: RequestUsage) => void): Promise<void> {
  let content = "";
  for await (const event of events) {
    const piece = emptyPiece();
    switch (event.type) {
      case "content":
        if (!event.text) continue;
        content += event.text;
        piece.content = event.text;
        piece.logprobs = event.logprobs;
        break;
      case "reasoning":
        if (!event.text) continue;
        piece.thinking = event.text;
        break;
      case "tool_call":
        piece.toolCalls.push({ index: event.index, call: event.call });
        break;
      case "tool_call_delta":
        // Ollama sends each call whole, once it is complete.
        continue;
      case "done": {
        if (event.finishReason === "cancelled") return;
        reportUsage(event.usage);
        const doneReason = event.finishReason === "length" ? "length" : "stop";
        await send(await shape.final({ ...emptyPiece(), logprobs: event.logprobs ?? [] }, { doneReason, usage: event.usage, content }));
        return;
      }
      case "error":
        await send({ error: event.message });
        return;
    }
    await send(shape.chunk(piece));
  }
}

export async function respondNative(c: Context, choice: ChatChoice, shape: NativeShape, stream: boolean): Promise<Response> {
  const reportUsage = (usage: RequestUsage) => c.set("usage", { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens });
  if (!stream) {
    const result = await choice.collect();
    reportUsage(result.usage);
    return c.json(await nativeReply(result, shape));
  }
  return ndjsonResponse((send) => sendNativeChunks(choice.events(), shape, send, reportUsage), (error) => ({ error: toApiError(error).message }));
}
