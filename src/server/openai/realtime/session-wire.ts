// A session's settings in the GA API's shape, as session.created and session.updated carry them.
import type { RealtimeAudioFormat } from "../../../audio/realtime/audio-formats.ts";
import type { SessionConfig } from "./session-config.ts";

export const formatWire = (format: RealtimeAudioFormat) =>
  format === "pcm16" ? { type: "audio/pcm", rate: 24000 } : { type: format === "g711_ulaw" ? "audio/pcmu" : "audio/pcma" };

function turnDetectionWire(config: SessionConfig) {
  const turn = config.turnDetection;
  if (!turn) return null;
  return {
    type: turn.type, threshold: turn.threshold, prefix_padding_ms: turn.prefixPaddingMs, silence_duration_ms: turn.silenceDurationMs,
    create_response: turn.createResponse, interrupt_response: turn.interruptResponse, idle_timeout_ms: null,
  };
}

export function sessionWire(config: SessionConfig): Record<string, unknown> {
  const input = {
    format: formatWire(config.inputFormat),
    transcription: config.transcription ? { model: config.transcription.model, language: config.transcription.language ?? null, prompt: config.transcription.prompt ?? "" } : null,
    noise_reduction: null,
    turn_detection: turnDetectionWire(config),
  };
  if (config.kind === "transcription") {
    return { type: "transcription", object: "realtime.transcription_session", id: config.id, audio: { input }, include: null, expires_at: 0 };
  }
  return {
    type: "realtime", object: "realtime.session", id: config.id, model: config.model ?? null,
    output_modalities: config.outputModalities, instructions: config.instructions,
    audio: { input, output: { format: formatWire(config.outputFormat), voice: config.voice, speed: config.speed } },
    tools: [...config.tools, ...config.mcpTools], tool_choice: config.toolChoice, max_output_tokens: config.maxOutputTokens,
    tracing: null, truncation: "auto", prompt: null, include: null, expires_at: 0,
  };
}
