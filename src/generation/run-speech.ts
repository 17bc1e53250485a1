// The one orchestrator of a speech request, shared by every surface: check the request's bounds, load the
// model with the request's load options, refuse a model without speech output, and start the speech on
// its engine. It knows nothing of HTTP or of audio file formats: the caller encodes the PCM it streams.
import { checkedAudio } from "../audio/audio-source.ts";
import { OptionError } from "../options/check-value.ts";
import { engineSettings } from "../options/engine-settings.ts";
import type { EngineHandle } from "../engine/engine-handle.ts";
import type { SpeechRequest, SpeechResult, SpeechStopReason } from "../engine/types.ts";
import type { ModelHandle, RunOptions } from "./chat-spec.ts";
import { MAX_SPEECH_FRAMES, NoSpeechOutputError, checkSpeechText, type SpeechSpec } from "./speech-spec.ts";

export interface RunningSpeech {
  engine: EngineHandle;
  /** Samples per second of the chunks. */
  sampleRate: number;
  /** Mono float PCM, in order, as the engine decodes frames. */
  chunks: AsyncIterable<Float32Array>;
  done: Promise<SpeechResult>;
}

/** How a speech ended, as the SDK's outputs and the speech route's `finish_reason` say it. */
export type SpeechFinishReason = "stop" | "length" | "context" | "abort";

export function speechFinishReason(stoppedBy: SpeechStopReason): SpeechFinishReason {
  const reasons = { end: "stop", limit: "length", context: "context", cancelled: "abort" } as const;
  return reasons[stoppedBy];
}

/** The request's text and frame limit, checked before any model is loaded. */
function checkSpeechBounds(spec: SpeechSpec): number {
  checkSpeechText(spec.text);
  const maxFrames = spec.maxFrames ?? MAX_SPEECH_FRAMES;
  if (!Number.isInteger(maxFrames) || maxFrames < 1 || maxFrames > MAX_SPEECH_FRAMES) {
    throw new OptionError("max_frames", `an integer in [1, ${MAX_SPEECH_FRAMES}]`);
  }
  return maxFrames;
}

export async function runSpeech(model: ModelHandle, spec: SpeechSpec, run: RunOptions = {}): Promise<RunningSpeech> {
  const maxFrames = checkSpeechBounds(spec);
  const speaker = spec.speaker === undefined ? undefined : checkedAudio(spec.speaker, "the speaker reference audio");
  const settings = engineSettings(spec.options);
  const engine = await model.engine(settings.load);
  if (!engine.info.speech) throw new NoSpeechOutputError(engine.info.path);
  const { seed, topK, topP, temperature } = settings.sampling;
  const request: SpeechRequest = {
    text: spec.text, seed: seed!, maxFrames,
    ...(spec.language !== undefined ? { language: spec.language } : {}),
    ...(speaker ? { speaker } : {}),
    ...(topK !== undefined ? { topK } : {}),
    ...(topP !== undefined ? { topP } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
  };
  const speech = engine.speak(request, run.signal ? { signal: run.signal } : {});
  return { engine, sampleRate: engine.info.speech.sampleRate, chunks: speech.chunks, done: speech.done };
}
