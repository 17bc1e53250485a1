// `--realtime-config FILE`: named pipelines, so that a client that sends only a model name (OpenAI's
// "gpt-realtime") gets a chat model, a transcription model and a voice. The file is JSON:
//   { "default": "assistant",
//     "presets": { "assistant": { "model": "qwen2.5-omni", "transcription_model": "…", "voice_model": "…",
//                                 "voice": "narrator", "instructions": "…", "output_modalities": ["audio"],
//                                 "speech": { "max_frames": 600, "seed": 7, "temperature": 0.7 } } } }
// A session whose model names a preset runs that pipeline; any other model is the chat model itself, with
// the default preset's other fields. `--realtime-voice-model` is the speech model when no preset names one.
import { readFileSync } from "node:fs";
import { z } from "zod";
import { MAX_SPEECH_FRAMES } from "../generation/speech-spec.ts";

const name = z.string().min(1).max(256);

export const presetSchema = z.strictObject({
  model: name.optional(),
  transcription_model: name.optional(),
  voice_model: name.optional(),
  voice: name.optional(),
  instructions: z.string().max(100_000).optional(),
  output_modalities: z.array(z.enum(["text", "audio"])).min(1).optional(),
  /** The speech run's sampling (seed, temperature, top_p, top_k) and the most frames of one reply. */
  speech: z.strictObject({
    max_frames: z.number().int().min(1).max(MAX_SPEECH_FRAMES).optional(),
    seed: z.number().int().optional(),
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().min(0).max(1).optional(),
    top_k: z.number().int().min(0).optional(),
  }).optional(),
});
export type RealtimePreset = z.infer<typeof presetSchema>;

const configSchema = z.strictObject({
  default: name.optional(),
  presets: z.record(name, presetSchema),
});

export interface RealtimeSettings {
  presets: Record<string, RealtimePreset>;
  /** The preset whose fields apply to a model that names no preset. */
  defaultPreset?: string;
  /** The speech model when the preset names none (--realtime-voice-model). */
  voiceModel?: string;
}

/** Reads and checks a --realtime-config file; a bad one stops start-up with what is wrong. */
export function loadRealtimeConfig(path: string, voiceModel?: string): RealtimeSettings {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(`Cannot read --realtime-config "${path}": ${(error as Error).message}`);
  }
  const parsed = configSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`Cannot use --realtime-config "${path}": ${issue.path.join(".") || "the file"}: ${issue.message}`);
  }
  if (parsed.data.default !== undefined && !parsed.data.presets[parsed.data.default]) {
    throw new Error(`Cannot use --realtime-config "${path}": default "${parsed.data.default}" names no preset`);
  }
  return {
    presets: parsed.data.presets,
    ...(parsed.data.default !== undefined ? { defaultPreset: parsed.data.default } : {}),
    ...(voiceModel !== undefined ? { voiceModel } : {}),
  };
}

/** The pipeline of a session model: its preset, else the default preset (without its chat model when the session names one). */
export function presetFor(settings: RealtimeSettings | undefined, model: string | undefined): { preset: RealtimePreset; named: boolean } {
  if (settings && model !== undefined && Object.hasOwn(settings.presets, model)) return { preset: settings.presets[model]!, named: true };
  const fallback = settings?.defaultPreset !== undefined ? settings.presets[settings.defaultPreset] : undefined;
  if (!fallback) return { preset: {}, named: false };
  if (model === undefined) return { preset: fallback, named: true };
  const { model: _chat, ...rest } = fallback;
  return { preset: rest, named: false };
}
