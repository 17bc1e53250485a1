// The beta interface of OpenAI's Realtime API, for the clients that still speak it: the beta clients of the
// `openai` package (`openai/beta/realtime/ws` sends `OpenAI-Beta: realtime=v1`, the browser's
// `openai/beta/realtime/websocket` the `openai-beta.realtime-v1` subprotocol) and many written against it
// (openai-realtime-api, older LiveKit and Mastra voice plugins) that listen for `response.audio.delta`. The
// session runs one way and writes GA events; this turns each into the beta's name and shape: the deltas'
// old names, `conversation.item.created` for `.added` (the beta has no `.done`), items with `text` and
// `audio` content, responses and sessions with the beta's flat fields, and `conversation.created` or
// `transcription_session.created` when the session opens.
import type { RealtimeAudioFormat } from "../../../audio/realtime/audio-formats.ts";
import type { SessionConfig } from "./session-config.ts";

/** The beta's names where the GA renamed an event; null: the beta has no such event. */
const BETA_NAMES: Record<string, string | null> = {
  "response.output_text.delta": "response.text.delta",
  "response.output_text.done": "response.text.done",
  "response.output_audio.delta": "response.audio.delta",
  "response.output_audio.done": "response.audio.done",
  "response.output_audio_transcript.delta": "response.audio_transcript.delta",
  "response.output_audio_transcript.done": "response.audio_transcript.done",
  "conversation.item.added": "conversation.item.created",
  "conversation.item.done": null,
};

/** GA session fields a beta session.update never has, and beta ones the GA moved. */
const GA_SESSION_FIELDS = ["type", "audio", "output_modalities"];
const BETA_SESSION_FIELDS = ["modalities", "input_audio_format", "output_audio_format", "input_audio_transcription", "turn_detection", "voice"];

/** Whether the upgrade asks for the beta interface: its header, or the browsers' subprotocol. */
export function asksForBeta(betaHeader: string | undefined, protocols: string | undefined): boolean {
  const header = (betaHeader ?? "").split(",").some((value) => value.trim().toLowerCase() === "realtime=v1");
  return header || (protocols ?? "").split(",").some((protocol) => protocol.trim() === "openai-beta.realtime-v1");
}

/** A session.update in the beta's shape: beta fields, and none of the GA's (`type` is required there). */
export function isBetaSession(update: Record<string, unknown>): boolean {
  return !GA_SESSION_FIELDS.some((field) => field in update) && BETA_SESSION_FIELDS.some((field) => field in update);
}

const FORMAT_NAMES: Record<string, RealtimeAudioFormat> = { "audio/pcm": "pcm16", "audio/pcmu": "g711_ulaw", "audio/pcma": "g711_alaw" };

/** An item with the beta's content types (`text` and `audio` for an assistant's). */
function betaItem(item: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(item.content)) return item;
  const renamed: Record<string, string> = { output_text: "text", output_audio: "audio" };
  return { ...item, content: item.content.map((part: { type: string }) => ({ ...part, type: renamed[part.type] ?? part.type })) };
}

function betaResponse(response: Record<string, unknown>): Record<string, unknown> {
  const { output_modalities: modalities, audio, output, ...rest } = response as { output_modalities: unknown; audio: { output: { format: { type: string }; voice: string } }; output: Array<Record<string, unknown>> };
  return {
    ...rest, output: output.map(betaItem), modalities,
    output_audio_format: FORMAT_NAMES[audio.output.format.type], voice: audio.output.voice,
  };
}

function betaTurnDetection(config: SessionConfig): Record<string, unknown> | null {
  const turn = config.turnDetection;
  if (!turn) return null;
  return {
    type: turn.type, threshold: turn.threshold, prefix_padding_ms: turn.prefixPaddingMs, silence_duration_ms: turn.silenceDurationMs,
    create_response: turn.createResponse, interrupt_response: turn.interruptResponse,
  };
}

/** The session in the beta's shape: a realtime session, or a transcription session. */
export function betaSessionWire(config: SessionConfig): Record<string, unknown> {
  const transcription = config.transcription
    ? { model: config.transcription.model, language: config.transcription.language ?? null, prompt: config.transcription.prompt ?? "" }
    : null;
  if (config.kind === "transcription") {
    return {
      id: config.id, object: "realtime.transcription_session", input_audio_format: config.inputFormat, input_audio_transcription: transcription,
      turn_detection: betaTurnDetection(config), input_audio_noise_reduction: null, include: null, modalities: ["text"],
    };
  }
  return {
    id: config.id, object: "realtime.session", model: config.model ?? null, modalities: config.outputModalities, instructions: config.instructions,
    voice: config.voice, input_audio_format: config.inputFormat, output_audio_format: config.outputFormat, input_audio_transcription: transcription,
    turn_detection: betaTurnDetection(config), input_audio_noise_reduction: null, tools: [...config.tools, ...config.mcpTools],
    tool_choice: config.toolChoice, temperature: config.temperature ?? 0.8, max_response_output_tokens: config.maxOutputTokens,
    speed: config.speed, tracing: null,
  };
}

/** A GA event as the beta writes it; undefined when the beta has no such event. */
export function betaEvent(type: string, fields: Record<string, unknown>, config: SessionConfig): { type: string; fields: Record<string, unknown> } | undefined {
  const name = Object.hasOwn(BETA_NAMES, type) ? BETA_NAMES[type] : type;
  if (name === null) return undefined;
  const out = { ...fields };
  if (out.item) out.item = betaItem(out.item as Record<string, unknown>);
  if (out.response) out.response = betaResponse(out.response as Record<string, unknown>);
  if (out.session) out.session = betaSessionWire(config);
  const transcription = config.kind === "transcription" && (type === "session.created" || type === "session.updated");
  return { type: transcription ? `transcription_${type}` : name ?? type, fields: out };
}
