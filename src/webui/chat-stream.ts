// Streams a reply from /v1/chat/completions (server-sent events): content and reasoning arrive apart
// (`delta.content`, `delta.reasoning` or `delta.reasoning_content`), usage in the last chunk.
import { request } from "./api.ts";
import type { ChatMessage } from "./conversations.ts";

export interface Sampling {
  temperature: number;
  maxTokens: number;
  topP: number;
}

export interface StreamEvents {
  onContent(text: string): void;
  onReasoning(text: string): void;
}

export interface StreamResult {
  completionTokens: number | undefined;
  finishReason: string | undefined;
}

interface Chunk {
  choices?: Array<{ delta?: { content?: string | null; reasoning?: string | null; reasoning_content?: string | null }; finish_reason?: string | null }>;
  usage?: { completion_tokens?: number };
  error?: { message?: string };
}

function toApiMessage(message: ChatMessage): unknown {
  if (!message.images?.length) return { role: message.role, content: message.content };
  return {
    role: message.role,
    content: [
      ...(message.content ? [{ type: "text", text: message.content }] : []),
      ...message.images.map((url) => ({ type: "image_url", image_url: { url } })),
    ],
  };
}

export async function streamChat(model: string, messages: ChatMessage[], sampling: Sampling, events: StreamEvents, signal: AbortSignal): Promise<StreamResult> {
  const response = await request("/v1/chat/completions", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      model,
      messages: messages.map(toApiMessage),
      stream: true,
      stream_options: { include_usage: true },
      temperature: sampling.temperature,
      max_tokens: sampling.maxTokens,
      top_p: sampling.topP,
    }),
    signal,
  });
  const result: StreamResult = { completionTokens: undefined, finishReason: undefined };
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += value;
    const events_ = buffer.split(/\r?\n\r?\n/);
    buffer = events_.pop() ?? "";
    for (const event of events_) {
      const data = event.split(/\r?\n/).filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trimStart()).join("\n");
      if (!data || data === "[DONE]") continue;
      const chunk = JSON.parse(data) as Chunk;
      if (chunk.error) throw new Error(chunk.error.message ?? "The server reported an error");
      const choice = chunk.choices?.[0];
      const reasoning = choice?.delta?.reasoning ?? choice?.delta?.reasoning_content;
      if (reasoning) events.onReasoning(reasoning);
      if (choice?.delta?.content) events.onContent(choice.delta.content);
      if (choice?.finish_reason) result.finishReason = choice.finish_reason;
      if (chunk.usage?.completion_tokens !== undefined) result.completionTokens = chunk.usage.completion_tokens;
    }
  }
  return result;
}
