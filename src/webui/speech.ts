// A speech model's answer: the text spoken by /v1/audio/speech as a WAV, returned as a data: URL the
// chat's audio player plays (and the conversation keeps). "Max tokens" bounds the audio frames.
import { request } from "./api.ts";
import type { Sampling } from "./chat-stream.ts";

export interface SpokenReply {
  /** data:audio/wav;base64,… */
  audio: string;
  bytes: number;
}

function dataUrl(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error("Cannot read the speech"));
    reader.readAsDataURL(blob);
  });
}

export async function speak(model: string, text: string, sampling: Sampling, signal: AbortSignal): Promise<SpokenReply> {
  const response = await request("/v1/audio/speech", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ model, input: text, response_format: "wav", temperature: sampling.temperature, top_p: sampling.topP, max_frames: sampling.maxTokens }),
    signal,
  });
  const blob = new Blob([await response.arrayBuffer()], { type: "audio/wav" });
  return { audio: await dataUrl(blob), bytes: blob.size };
}
