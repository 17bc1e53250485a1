// POST /v1/audio/speech on every profile, in OpenAI's shape: `model`, `input`, `voice` (a speaker file by
// name, or the model's own voice), `instructions`, `speed` (Sonic time-stretch), `response_format` (mp3,
// opus, flac, wav, pcm) and `stream_format` (`audio`: the file's bytes as they are encoded, in a chunked
// body; `sse`: speech.audio.delta events with base64 bytes, then speech.audio.done with the usage).
// The body becomes a SpeechSpec for runSpeech; the PCM it streams is stretched, encoded and written here.
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { z } from "zod";
import { dirname } from "node:path";
import { encodedSpeech, type SpeechOutput } from "../../audio/speech/encoded-speech.ts";
import { SPEECH_FORMATS, SPEECH_MIME_TYPES, formatsAtRate, isSpeechFormat } from "../../audio/speech/speech-encoder.ts";
import { MAX_SPEECH_SPEED, MIN_SPEECH_SPEED } from "../../audio/speech/time-stretch.ts";
import { UnknownVoiceError, resolveVoice } from "../../audio/voices.ts";
import { runSpeech, speechFinishReason, type RunningSpeech } from "../../generation/run-speech.ts";
import { MAX_SPEECH_FRAMES, checkSpeechText, type SpeechSpec } from "../../generation/speech-spec.ts";
import { EngineError, type SpeechResult } from "../../engine/types.ts";
import { mergeOptionValues } from "../../options/values.ts";
import { readWireOptions, wireOptionFields } from "../../options/wire-names.ts";
import { badRequest } from "../api-error.ts";
import { modelOptions, servedModel } from "../chat-request.ts";
import type { ServerDeps } from "../deps.ts";
import type { ServedModel } from "../model-service.ts";
import { readJsonBody, validate } from "../validation.ts";

/** The sampling fields a speech request may set (the option table's wire names). */
const SAMPLING_FIELDS = ["seed", "temperature", "top_p", "top_k"] as const;
/** Most characters of `instructions` and of `language`. */
const MAX_INSTRUCTIONS_CHARS = 4096;
const MAX_LANGUAGE_CHARS = 64;

function samplingFields(): Record<string, z.ZodType> {
  const all = wireOptionFields();
  return Object.fromEntries(SAMPLING_FIELDS.map((name) => [name, all[name]!]));
}

const speechSchema = z.object({
  model: z.string().optional(),
  input: z.string(),
  voice: z.union([z.string(), z.object({ id: z.string() })]).optional(),
  instructions: z.string().max(MAX_INSTRUCTIONS_CHARS).optional(),
  speed: z.number().optional(),
  response_format: z.string().optional(),
  stream_format: z.string().optional(),
  /** llamux's extension: the language the pipeline speaks in (Qwen3-TTS: "english", "chinese", …). */
  language: z.string().max(MAX_LANGUAGE_CHARS).optional(),
  /** llamux's extension: the most audio frames (12.5 a second) to make; default and ceiling MAX_SPEECH_FRAMES. */
  max_frames: z.number().int().min(1).max(MAX_SPEECH_FRAMES).optional(),
  ...samplingFields(),
});
type SpeechBody = z.infer<typeof speechSchema>;

/** Folders a voice name is looked up in: the model's own, then llamux's voices folder. */
export function voiceFolders(deps: ServerDeps, model: ServedModel): string[] {
  return [...(model.stored ? [] : [dirname(model.path)]), ...(deps.voicesDir ? [deps.voicesDir] : [])];
}

/** The request's reference voice: a speaker file's bytes, or undefined for the model's own voice. */
async function speakerOf(deps: ServerDeps, model: ServedModel, body: SpeechBody): Promise<Uint8Array | undefined> {
  const voice = typeof body.voice === "object" ? body.voice.id : body.voice;
  try {
    return await resolveVoice(voice, voiceFolders(deps, model));
  } catch (error) {
    if (error instanceof UnknownVoiceError) throw badRequest(error.message, "voice");
    throw error;
  }
}

/** The output the body asks for, or a 400 naming what is supported. */
export function speechOutputOf(body: Pick<SpeechBody, "response_format" | "speed">, sampleRate: number | undefined, mode: SpeechOutput["mode"]): SpeechOutput {
  const format = body.response_format ?? "mp3";
  if (!isSpeechFormat(format)) throw badRequest(`response_format "${format}" is not supported: use one of ${SPEECH_FORMATS.join(", ")}`, "response_format");
  if (sampleRate !== undefined && !formatsAtRate(sampleRate).includes(format)) {
    throw badRequest(`response_format "${format}" cannot carry this model's ${sampleRate} Hz audio: use one of ${formatsAtRate(sampleRate).join(", ")}`, "response_format");
  }
  const speed = body.speed ?? 1;
  if (!(speed >= MIN_SPEECH_SPEED && speed <= MAX_SPEECH_SPEED)) throw badRequest(`speed must be a number from ${MIN_SPEECH_SPEED} to ${MAX_SPEECH_SPEED}`, "speed");
  return { format, speed, mode, sampleRate: sampleRate ?? 0 };
}

/** OpenAI's speech usage: the text's tokens in, the audio frames out. */
function speechUsage(result: SpeechResult) {
  return { input_tokens: result.promptTokens, output_tokens: result.frames, total_tokens: result.promptTokens + result.frames };
}

export function speech(deps: ServerDeps) {
  return async function speechHandler(c: Context) {
    const body = validate(speechSchema, await readJsonBody(c));
    const streamFormat = body.stream_format ?? "audio";
    if (streamFormat !== "audio" && streamFormat !== "sse") throw badRequest(`stream_format "${streamFormat}" is not supported: use audio or sse`, "stream_format");
    // checked before the model loads; the sample rate comes with the engine
    speechOutputOf(body, undefined, "whole");
    // before the model and the voice are looked up, so a bad text is what the 400 names (runSpeech checks it again for its other callers)
    checkSpeechText(body.input);
    const model = deps.models.resolve(body.model);
    if (!deps.models.speaks(model)) throw badRequest(`Model "${model.id}" has no speech output: /v1/audio/speech needs a text-to-speech model`, "model");
    if (body.instructions?.trim()) throw badRequest(`Model "${model.id}" takes no instructions: its speech pipeline has no instruction input`, "instructions");
    const speaker = await speakerOf(deps, model, body);

    const spec: SpeechSpec = {
      text: body.input,
      options: mergeOptionValues(deps.profile.openAiDefaults, modelOptions(model), readWireOptions(body, deps.profile.preferredWireNames)),
      ...(speaker ? { speaker } : {}),
      ...(body.language ? { language: body.language } : {}),
      ...(body.max_frames !== undefined ? { maxFrames: body.max_frames } : {}),
    };
    // the speech stops when the client leaves, or when this handler fails before its answer is on its way
    const stop = new AbortController();
    try {
      return await speechAnswer(c, body, await runSpeech(servedModel(deps, model), spec, { signal: AbortSignal.any([c.req.raw.signal, stop.signal]) }));
    } catch (error) {
      stop.abort();
      // a prompt that leaves no room for audio in the model's context, refused before any audio
      if (error instanceof EngineError && error.code === "context_overflow") throw badRequest(error.message, "input");
      throw error;
    }
  };
}

/** The running speech written as the body asks: a whole file, a chunked stream, or SSE events. */
async function speechAnswer(c: Context, body: SpeechBody, running: RunningSpeech): Promise<Response> {
  const streamFormat = body.stream_format ?? "audio";
  const mode = body.stream_format === undefined ? "whole" : "stream";
  const output = speechOutputOf(body, running.sampleRate, mode);
  const bytes = encodedSpeech(running.chunks, output);
  const reportUsage = (result: SpeechResult) => c.set("usage", { promptTokens: result.promptTokens, completionTokens: result.frames });

  if (streamFormat === "sse") {
    // the first bytes come before the status is sent, so that a speech that fails to start is an error response
    const first = await bytes.next();
    return streamSSE(c, async (stream) => {
      for (let next = first; !next.done; next = await bytes.next()) {
        await stream.writeSSE({ data: JSON.stringify({ type: "speech.audio.delta", audio: Buffer.from(next.value).toString("base64") }) });
      }
      const result = await running.done;
      reportUsage(result);
      // finish_reason is llamux's: "stop", "length" (max_frames) or "context" (the model's context was full)
      await stream.writeSSE({ data: JSON.stringify({ type: "speech.audio.done", usage: speechUsage(result), finish_reason: speechFinishReason(result.stoppedBy) }) });
    });
  }
  const headers = { "content-type": SPEECH_MIME_TYPES[output.format] };
  if (mode === "whole") {
    const parts: Uint8Array[] = [];
    for await (const part of bytes) parts.push(part);
    reportUsage(await running.done);
    return new Response(Buffer.concat(parts), { headers });
  }
  const first = await bytes.next();
  const audio = new ReadableStream<Uint8Array>({
    async start(controller) {
      if (!first.done) return controller.enqueue(first.value);
      reportUsage(await running.done);
      controller.close();
    },
    async pull(controller) {
      const next = await bytes.next();
      if (next.done) {
        reportUsage(await running.done);
        controller.close();
      } else {
        controller.enqueue(next.value);
      }
    },
    async cancel() {
      await bytes.return(undefined);
    },
  });
  return new Response(audio, { headers });
}
