// One session's settings and how session.update changes them. Both spellings clients send are read: the
// GA API's (`audio.input.format`, `output_modalities`, `audio.output.voice`) and the beta's
// (`input_audio_format`, `modalities`, `voice`, `turn_detection` at the top); the session is written
// back in the GA shape (session-wire.ts). A field of the wrong type or value is an error naming it, and
// the session is left as it was.
import { z } from "zod";
import { REALTIME_AUDIO_FORMATS, type RealtimeAudioFormat } from "../../../audio/realtime/audio-formats.ts";
import { MAX_SPEECH_FRAMES } from "../../../generation/speech-spec.ts";
import { MAX_SPEECH_SPEED, MIN_SPEECH_SPEED } from "../../../audio/speech/time-stretch.ts";
import { ClientEventError } from "./client-events.ts";
import { presetFor, type RealtimePreset, type RealtimeSettings } from "../../realtime-config.ts";

export type Modality = "text" | "audio";

export interface TurnDetectionConfig {
  type: "server_vad";
  threshold: number;
  prefixPaddingMs: number;
  silenceDurationMs: number;
  createResponse: boolean;
  interruptResponse: boolean;
}

export interface TranscriptionConfig {
  model: string;
  language?: string;
  prompt?: string;
}

/** A function tool as the session lists it (the Realtime API's flat shape). */
export interface SessionTool {
  type: "function";
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

export interface SessionConfig {
  kind: "realtime" | "transcription";
  id: string;
  /** The model as the client named it (a preset's name, or a served model). */
  model: string | undefined;
  /** The served model the replies run on. */
  chatModel: string | undefined;
  /** The served model that speaks the replies. */
  voiceModel: string | undefined;
  instructions: string;
  outputModalities: Modality[];
  inputFormat: RealtimeAudioFormat;
  outputFormat: RealtimeAudioFormat;
  transcription: TranscriptionConfig | null;
  turnDetection: TurnDetectionConfig | null;
  voice: string;
  speed: number;
  tools: SessionTool[];
  /** MCP tool entries (configured servers by label), read when a response runs. */
  mcpTools: Array<Record<string, unknown>>;
  toolChoice: unknown;
  maxOutputTokens: number | "inf";
  temperature: number | undefined;
  /** The speech run's sampling as wire options, and the most audio frames of one reply. */
  speech: { maxFrames: number; options: Record<string, number> };
}

export const DEFAULT_TURN_DETECTION: TurnDetectionConfig = {
  type: "server_vad", threshold: 0.5, prefixPaddingMs: 300, silenceDurationMs: 500, createResponse: true, interruptResponse: true,
};

const DEFAULT_INSTRUCTIONS = "You are a helpful voice assistant. Answer briefly, in plain spoken sentences.";

/** A new session: the preset of its model (or the default one) over OpenAI's defaults. */
export function initialSession(kind: SessionConfig["kind"], id: string, model: string | undefined, settings: RealtimeSettings | undefined): SessionConfig {
  const base: SessionConfig = {
    kind, id, model, chatModel: model, voiceModel: settings?.voiceModel, instructions: DEFAULT_INSTRUCTIONS,
    outputModalities: ["audio"], inputFormat: "pcm16", outputFormat: "pcm16", transcription: null,
    turnDetection: { ...DEFAULT_TURN_DETECTION }, voice: "alloy", speed: 1, tools: [], mcpTools: [], toolChoice: "auto",
    maxOutputTokens: "inf", temperature: undefined, speech: { maxFrames: MAX_SPEECH_FRAMES, options: {} },
  };
  const configured = withPreset(base, settings, model);
  // Without a speech model a session answers in text, unless it asks for audio (then its replies fail, saying why).
  if (!configured.voiceModel && kind === "realtime") configured.outputModalities = ["text"];
  return configured;
}

function withPreset(config: SessionConfig, settings: RealtimeSettings | undefined, model: string | undefined): SessionConfig {
  const { preset } = presetFor(settings, model);
  return applyPreset({ ...config, model: model ?? preset.model, chatModel: preset.model ?? model }, preset, settings);
}

function applyPreset(config: SessionConfig, preset: RealtimePreset, settings: RealtimeSettings | undefined): SessionConfig {
  const { max_frames: maxFrames, ...speechOptions } = preset.speech ?? {};
  return {
    ...config,
    voiceModel: preset.voice_model ?? settings?.voiceModel,
    ...(preset.instructions !== undefined ? { instructions: preset.instructions } : {}),
    ...(preset.output_modalities ? { outputModalities: preset.output_modalities } : {}),
    ...(preset.voice !== undefined ? { voice: preset.voice } : {}),
    transcription: preset.transcription_model !== undefined ? { model: preset.transcription_model } : config.transcription,
    speech: { maxFrames: maxFrames ?? MAX_SPEECH_FRAMES, options: speechOptions as Record<string, number> },
  };
}

const formatNames: Record<string, RealtimeAudioFormat> = { "audio/pcm": "pcm16", "audio/pcmu": "g711_ulaw", "audio/pcma": "g711_alaw" };

/** GA's {type, rate} or the beta's name. */
const audioFormat = z.union([
  z.enum(REALTIME_AUDIO_FORMATS),
  z.looseObject({ type: z.enum(["audio/pcm", "audio/pcmu", "audio/pcma"]), rate: z.literal(24000).optional() }).transform((f) => formatNames[f.type]!),
]);

const turnDetection = z.looseObject({
  type: z.enum(["server_vad", "semantic_vad"]),
  threshold: z.number().min(0).max(1).optional(),
  prefix_padding_ms: z.number().int().min(0).max(10_000).optional(),
  silence_duration_ms: z.number().int().min(20).max(10_000).optional(),
  create_response: z.boolean().optional(),
  interrupt_response: z.boolean().optional(),
}).nullable();

const transcription = z.looseObject({ model: z.string().min(1).max(256).optional(), language: z.string().max(64).optional(), prompt: z.string().max(10_000).optional() }).nullable();

const tool = z.looseObject({
  type: z.enum(["function", "mcp"]).optional(),
  name: z.string().min(1).max(256).optional(),
  description: z.string().max(100_000).optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
});

const voice = z.union([z.string().min(1).max(256), z.looseObject({ id: z.string().min(1).max(256) }).transform((v) => v.id)]);
const maxTokens = z.union([z.number().int().min(1), z.literal("inf")]);

const updateSchema = z.looseObject({
  type: z.enum(["realtime", "transcription"]).optional(),
  model: z.string().min(1).max(256).optional(),
  instructions: z.string().max(1_000_000).optional(),
  output_modalities: z.array(z.enum(["text", "audio"])).min(1).optional(),
  modalities: z.array(z.enum(["text", "audio"])).min(1).optional(),
  audio: z.looseObject({
    input: z.looseObject({ format: audioFormat.optional(), transcription: transcription.optional(), turn_detection: turnDetection.optional() }).optional(),
    output: z.looseObject({ format: audioFormat.optional(), voice: voice.optional(), speed: z.number().min(MIN_SPEECH_SPEED).max(MAX_SPEECH_SPEED).optional() }).optional(),
  }).optional(),
  input_audio_format: audioFormat.optional(),
  output_audio_format: audioFormat.optional(),
  input_audio_transcription: transcription.optional(),
  turn_detection: turnDetection.optional(),
  voice: voice.optional(),
  speed: z.number().min(MIN_SPEECH_SPEED).max(MAX_SPEECH_SPEED).optional(),
  tools: z.array(tool).max(128).optional(),
  tool_choice: z.unknown().optional(),
  max_output_tokens: maxTokens.optional(),
  max_response_output_tokens: maxTokens.optional(),
  temperature: z.number().min(0).max(2).optional(),
});

function turnDetectionOf(value: z.infer<typeof turnDetection>, current: TurnDetectionConfig | null): TurnDetectionConfig | null {
  if (value === null) return null;
  // semantic_vad (a turn model of OpenAI's) is served by the same detector, with server_vad's settings
  const base = current ?? DEFAULT_TURN_DETECTION;
  return {
    type: "server_vad",
    threshold: value.threshold ?? base.threshold,
    prefixPaddingMs: value.prefix_padding_ms ?? base.prefixPaddingMs,
    silenceDurationMs: value.silence_duration_ms ?? base.silenceDurationMs,
    createResponse: value.create_response ?? base.createResponse,
    interruptResponse: value.interrupt_response ?? base.interruptResponse,
  };
}

function transcriptionOf(value: z.infer<typeof transcription>, current: TranscriptionConfig | null, kind: SessionConfig["kind"]): TranscriptionConfig | null {
  if (value === null) return null;
  const model = value.model ?? current?.model;
  if (model === undefined) throw new ClientEventError("The transcription needs a model: a served model that takes audio", kind === "transcription" ? "session.audio.input.transcription.model" : "session.audio.input.transcription.model");
  return { model, ...(value.language ? { language: value.language } : {}), ...(value.prompt ? { prompt: value.prompt } : {}) };
}

function toolsOf(tools: Array<z.infer<typeof tool>>): { tools: SessionTool[]; mcpTools: Array<Record<string, unknown>> } {
  const functions: SessionTool[] = [];
  const mcpTools: Array<Record<string, unknown>> = [];
  for (const [index, entry] of tools.entries()) {
    if (entry.type === "mcp") {
      mcpTools.push(entry);
      continue;
    }
    if (!entry.name) throw new ClientEventError("A function tool needs a name", `session.tools[${index}].name`);
    functions.push({ type: "function", name: entry.name, ...(entry.description ? { description: entry.description } : {}), ...(entry.parameters ? { parameters: entry.parameters } : {}) });
  }
  return { tools: functions, mcpTools };
}

const fieldPath = (path: PropertyKey[]) => ["session", ...path.map((p) => (typeof p === "number" ? `[${p}]` : String(p)))].join(".").replace(/\.\[/g, "[");

/** The session after `session.update`'s `session` object; a ClientEventError leaves it unchanged. */
export function updatedSession(config: SessionConfig, update: Record<string, unknown>, settings: RealtimeSettings | undefined): SessionConfig {
  const parsed = updateSchema.safeParse(update);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ClientEventError(`Invalid value for '${fieldPath(issue.path)}': ${issue.message}`, fieldPath(issue.path), "invalid_value");
  }
  const u = parsed.data;
  if (u.type !== undefined && u.type !== config.kind) {
    throw new ClientEventError(`Cannot change a ${config.kind} session into a ${u.type} session: open a new one${u.type === "transcription" ? " with ?intent=transcription" : ""}`, "session.type");
  }
  let next: SessionConfig = { ...config };
  if (u.model !== undefined && u.model !== config.model) next = withPreset(next, settings, u.model);
  const input = u.audio?.input;
  const output = u.audio?.output;
  const modalities = u.output_modalities ?? u.modalities;
  if (modalities) next.outputModalities = modalities.includes("audio") ? ["audio"] : ["text"];
  if (u.instructions !== undefined) next.instructions = u.instructions;
  const inputFormat = input?.format ?? u.input_audio_format;
  if (inputFormat) next.inputFormat = inputFormat;
  const outputFormat = output?.format ?? u.output_audio_format;
  if (outputFormat) next.outputFormat = outputFormat;
  const transcriptionUpdate = input?.transcription !== undefined ? input.transcription : u.input_audio_transcription;
  if (transcriptionUpdate !== undefined) next.transcription = transcriptionOf(transcriptionUpdate, next.transcription, next.kind);
  const turn = input?.turn_detection !== undefined ? input.turn_detection : u.turn_detection;
  if (turn !== undefined) next.turnDetection = turnDetectionOf(turn, next.turnDetection);
  const voiceName = output?.voice ?? u.voice;
  if (voiceName !== undefined) next.voice = voiceName;
  const speed = output?.speed ?? u.speed;
  if (speed !== undefined) next.speed = speed;
  if (u.tools) Object.assign(next, toolsOf(u.tools));
  if (u.tool_choice !== undefined) next.toolChoice = u.tool_choice;
  const maxOutput = u.max_output_tokens ?? u.max_response_output_tokens;
  if (maxOutput !== undefined) next.maxOutputTokens = maxOutput;
  if (u.temperature !== undefined) next.temperature = u.temperature;
  return next;
}
