// Pure translations between OpenAI-compatible bodies and the engine's request and events.
import { newId } from "../../ids.ts";
import type { ChatMessage } from "../../chat/types.ts";
import type { RequestUsage, TokenLogprob, TokenLogprobs } from "../../engine/types.ts";
import type { OptionValues } from "../../options/values.ts";
import type { ChatResult } from "../../generation/chat.ts";
import { finishReasonOf, stopReasonOf } from "./stream-choices.ts";
import { badRequest } from "../api-error.ts";
import type { ChatCompletionRequest, SamplingRequest } from "./schemas.ts";
import type { ImageUrlReader } from "../request-images.ts";
import type { AudioReader } from "../request-audio.ts";

/** vLLM's checks on how choices are asked for, shared by chat and text completions. */
export function checkChoiceOptions(b: SamplingRequest, n: number, options: OptionValues): void {
  if (n > 1 && options.temperature === 0) throw badRequest("n must be 1 when using greedy sampling", "n");
  if (b.stream_options && !b.stream) throw badRequest("Stream options can only be defined when `stream=True`.", "stream_options");
}

export function stopStrings(stop: string | string[] | null | undefined): string[] {
  if (stop == null) return [];
  const list = typeof stop === "string" ? [stop] : stop;
  if (list.some((s) => s === "")) throw badRequest("Stop strings must not be empty", "stop");
  return list;
}

const refuseImages: ImageUrlReader = async (_url, param) => {
  throw badRequest("Image input is not supported here", param);
};

const refuseAudio: AudioReader = (_audio, param) => {
  throw badRequest("Audio input is not supported here", param);
};

/** Chat messages with text parts joined, image parts read into the message's images and input_audio parts into its audio. */
export async function toChatMessages(
  messages: ChatCompletionRequest["messages"], readImage: ImageUrlReader = refuseImages, readAudio: AudioReader = refuseAudio,
): Promise<ChatMessage[]> {
  const out: ChatMessage[] = [];
  for (const [index, m] of messages.entries()) out.push(await toChatMessage(m, index, readImage, readAudio));
  return out;
}

async function toChatMessage(m: ChatCompletionRequest["messages"][number], index: number, readImage: ImageUrlReader, readAudio: AudioReader): Promise<ChatMessage> {
  let content: string | null = null;
  const images: Uint8Array[] = [];
  const audio: Uint8Array[] = [];
  if (typeof m.content === "string") content = m.content;
  else if (Array.isArray(m.content)) {
    const texts: string[] = [];
    for (const [partIndex, part] of m.content.entries()) {
      if (part.type === "text" && "text" in part && typeof part.text === "string") texts.push(part.text);
      else if (part.type === "image_url") {
        const param = `messages[${index}].content[${partIndex}].image_url`;
        const value = (part as { image_url?: unknown }).image_url;
        const url = typeof value === "string" ? value : (value as { url?: unknown } | undefined)?.url;
        if (typeof url !== "string") throw badRequest('An image_url part needs {"url": "data:image/...;base64,..." or "https://..."}', param);
        images.push(await readImage(url, param));
      } else if (part.type === "input_audio") {
        // OpenAI's {"type": "input_audio", "input_audio": {"data": base64, "format": "wav" | "mp3"}}
        const param = `messages[${index}].content[${partIndex}].input_audio`;
        const value = (part as { input_audio?: { data?: unknown; format?: unknown } }).input_audio;
        if (typeof value?.data !== "string") throw badRequest('An input_audio part needs {"data": "<base64>", "format": "wav" | "mp3" | "flac"}', param);
        audio.push(readAudio({ data: value.data, ...(typeof value.format === "string" ? { format: value.format } : {}) }, param));
      } else throw badRequest(`Unsupported content part type "${part.type}"`, `messages[${index}].content`);
    }
    content = texts.join("\n");
  }
  const out: ChatMessage = { role: m.role, content };
  if (images.length) out.images = images;
  if (audio.length) out.audio = audio;
  if (m.name) out.name = m.name;
  if (m.tool_calls) out.tool_calls = m.tool_calls;
  if (m.tool_call_id) out.tool_call_id = m.tool_call_id;
  const reasoning = m.reasoning_content ?? m.reasoning;
  if (reasoning) out.reasoning_content = reasoning;
  return out;
}

export function completionId(prefix: "chatcmpl" | "cmpl"): string {
  return newId(prefix === "chatcmpl" ? "chatCompletion" : "textCompletion");
}

export interface Usage { prompt_tokens: number; completion_tokens: number; total_tokens: number; prompt_tokens_details?: { cached_tokens: number } }

export function toUsage(promptTokens: number, usages: RequestUsage[]): Usage {
  const completion = usages.reduce((sum, u) => sum + u.completionTokens, 0);
  const cached = Math.min(...usages.map((u) => u.cachedPromptTokens));
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: promptTokens + completion,
    ...(cached > 0 ? { prompt_tokens_details: { cached_tokens: cached } } : {}),
  };
}

/** A -inf logprob is reported as -9999.0, as vLLM does, since JSON has no infinity. */
const finite = (logprob: number) => (Number.isFinite(logprob) ? logprob : -9999);
const utf8 = (text: string) => Array.from(Buffer.from(text, "utf8"));
const chatTokenLogprob = (t: TokenLogprob) => ({ token: t.text, logprob: finite(t.logprob), bytes: utf8(t.text) });

/** Chat logprobs: {content: [{token, logprob, bytes, top_logprobs}]}. */
export function chatLogprobs(entries: TokenLogprobs[]) {
  return { content: entries.map((e) => ({ ...chatTokenLogprob(e), top_logprobs: e.top.map(chatTokenLogprob) })) };
}

/** Legacy completions logprobs: parallel arrays plus text offsets. */
export function textLogprobs(entries: TokenLogprobs[], startOffset = 0) {
  let offset = startOffset;
  return {
    tokens: entries.map((e) => e.text),
    token_logprobs: entries.map((e) => finite(e.logprob)),
    top_logprobs: entries.map((e) => Object.fromEntries(e.top.map((t) => [t.text, finite(t.logprob)]))),
    text_offset: entries.map((e) => {
      const at = offset;
      offset += e.text.length;
      return at;
    }),
  };
}

/** The assistant message of a finished choice, in vLLM's shape. Text around tool calls that is only whitespace is null. */
function assistantMessage(result: ChatResult) {
  const content = result.toolCalls.length > 0 && !result.content.trim() ? null : result.content;
  return {
    role: "assistant", content, refusal: null, annotations: null, audio: null, function_call: null,
    tool_calls: result.toolCalls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments) } })),
    reasoning: result.reasoning || null,
  };
}

export function chatCompletionBody(id: string, created: number, model: string, results: ChatResult[], usage: Usage, withLogprobs: boolean) {
  return {
    id,
    object: "chat.completion",
    created,
    model,
    choices: results.map((result, index) => ({
      index,
      message: assistantMessage(result),
      logprobs: withLogprobs ? chatLogprobs(result.logprobs) : null,
      finish_reason: finishReasonOf(result.finishReason),
      stop_reason: stopReasonOf(result),
    })),
    usage,
    system_fingerprint: null,
  };
}

export function chatChunk(id: string, created: number, model: string, index: number, delta: Record<string, unknown>, finishReason: string | null = null, extra: Record<string, unknown> = {}) {
  return { id, object: "chat.completion.chunk", created, model, choices: [{ index, delta, logprobs: null, finish_reason: finishReason, ...extra }] };
}
