// The OpenAI-style event stream: `data: <json>` events ending with `data: [DONE]`.
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";

export type SendChunk = (data: unknown) => Promise<void>;
/** Writes an SSE comment, which clients skip: it keeps the connection and proxies alive during a long prefill. */
export type KeepAlive = () => Promise<void>;

export function openAiEventStream(c: Context, produce: (send: SendChunk, keepAlive: KeepAlive) => Promise<void>): Response {
  return streamSSE(c, async (stream) => {
    await produce((data) => stream.writeSSE({ data: JSON.stringify(data) }), () => stream.write(": keep-alive\n\n").then(() => undefined));
    await stream.writeSSE({ data: "[DONE]" });
  });
}
