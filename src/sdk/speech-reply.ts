// A conversation's reply from a text-to-speech model: the last user message's text spoken through the
// speech orchestrator (runSpeech), each decoded chunk streamed as an AudioSample, then Complete with an
// assistant message that holds the whole speech as a WAV audio part. `maxTokens` bounds the audio frames.
import type { EngineHandle } from "../engine/engine-handle.ts";
import { runSpeech } from "../generation/run-speech.ts";
import { speechEncoder } from "../audio/speech/speech-encoder.ts";
import { AudioContent, ChatMessage } from "./chat-message.ts";
import type { GenerationOptions } from "./generation-options.ts";
import { AudioSample, Complete, type MessageResponse } from "./message-response.ts";

/** The text to speak: the last user message's. */
function textToSpeak(messages: ChatMessage[]): string {
  const last = [...messages].reverse().find((message) => message.role === "user");
  if (!last) throw new TypeError("Cannot speak: the conversation has no user message to speak");
  return last.text;
}

export async function* speechReply(engine: EngineHandle, messages: ChatMessage[], options: GenerationOptions, signal: AbortSignal): AsyncGenerator<MessageResponse> {
  const speech = await runSpeech({ engine: async () => engine }, {
    text: textToSpeak(messages),
    options: options.optionValues(),
    ...(options.maxTokens !== undefined ? { maxFrames: options.maxTokens } : {}),
  }, { signal });
  const wav = speechEncoder("wav", speech.sampleRate, "whole");
  const started = performance.now();
  for await (const samples of speech.chunks) {
    await wav.write(samples);
    yield new AudioSample(samples, speech.sampleRate);
  }
  const result = await speech.done;
  const seconds = (performance.now() - started) / 1000;
  const message = new ChatMessage({ role: "assistant", content: [new AudioContent(await wav.end(), "audio/wav")] });
  // as for text, "length" is a frame limit or the end of the context
  const finishReason = result.stoppedBy === "limit" || result.stoppedBy === "context" ? "length" : result.stoppedBy === "cancelled" ? "cancelled" : "stop";
  yield new Complete(message, finishReason, {
    promptTokens: result.promptTokens, completionTokens: result.frames, totalTokens: result.promptTokens + result.frames,
    tokensPerSecond: seconds > 0 ? result.frames / seconds : 0,
  });
}
