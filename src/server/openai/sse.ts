// The OpenAI-style event stream: `data: <json>` events ending with `data: [DONE]`.
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";

export type SendChunk = (data: unknown) => Promise<void>;

export function openAiEventStream(c: Context, produce: (send: SendChunk) => Promise<void>): Response {
  return streamSSE(c, async (stream) => {
    await produce((data) => stream.writeSSE({ data: JSON.stringify(data) }));
    await stream.writeSSE({ data: "[DONE]" });
  });
}
