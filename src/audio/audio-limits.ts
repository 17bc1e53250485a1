// Bounds on audio input, in one place for every entry point (chat parts, transcriptions, the SDK, `run`).

/** Most bytes of one audio file (OpenAI's transcription limit). */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;
/** Most seconds of one audio clip, checked after decoding (10 Whisper chunks: 7,500 tokens on Qwen2-Audio). */
export const MAX_AUDIO_SECONDS = 300;
