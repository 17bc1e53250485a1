// A server-sent event stream whose events are named by their `type` (`event: <type>` then
// `data: <json>`), as the Responses API and Anthropic's Messages API send them; no `[DONE]` at the end.
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";

export type SendEvent = (data: { type: string } & Record<string, unknown>) => Promise<void>;

/** Writes an SSE comment, which clients skip: it keeps the connection and proxies alive during a long prefill. */
export type KeepAlive = () => Promise<void>;

export function namedEventStream(c: Context, produce: (send: SendEvent, keepAlive: KeepAlive) => Promise<void>): Response {
  return streamSSE(c, async (stream) => {
    await produce((data) => stream.writeSSE({ event: data.type, data: JSON.stringify(data) }), () => stream.write(": keep-alive\n\n").then(() => undefined));
  });
}
