// Named voices for speech: speaker files (WAV, MP3, FLAC) whose file name without its extension is the
// voice's name, in the model's own folder and in llamux's voices folder (LLAMUX_VOICES). A request names
// one as OpenAI's `voice`; OpenAI's built-in names that no file takes mean the model's own voice.
import { open, readdir, stat } from "node:fs/promises";
import { extname, join } from "node:path";
import { AudioInputError } from "./audio-input-error.ts";

/** Most bytes of a speaker file (a reference voice is a few seconds of speech). */
export const MAX_SPEAKER_FILE_BYTES = 10 * 1024 * 1024;
/** Most entries read from one folder when looking for voices. */
export const MAX_VOICE_FOLDER_ENTRIES = 4096;
/** Most voices listed (in an error that names the available ones). */
export const MAX_VOICES_LISTED = 64;
/** OpenAI's voice names: with no file of that name, they ask for the model's own voice. */
export const OPENAI_VOICE_NAMES = ["alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage", "shimmer", "verse", "marin", "cedar"];

const SPEAKER_EXTENSIONS = new Set([".wav", ".mp3", ".flac"]);

/**
 * Voice name → file, the first folder winning a name found in both. Asynchronous throughout: a request
 * path lists the folders, and one with thousands of entries must not hold up the server's thread.
 */
export async function listVoices(folders: readonly string[]): Promise<Map<string, string>> {
  const voices = new Map<string, string>();
  for (const folder of folders) {
    let entries: string[];
    try {
      entries = (await readdir(folder)).slice(0, MAX_VOICE_FOLDER_ENTRIES);
    } catch {
      continue;
    }
    const candidates = entries.sort().flatMap((entry) => {
      const extension = extname(entry).toLowerCase();
      const name = entry.slice(0, -extension.length);
      return SPEAKER_EXTENSIONS.has(extension) && name ? [{ name, path: join(folder, entry) }] : [];
    });
    // only regular files: a FIFO named like a voice would block the read
    const regular = await Promise.all(candidates.map(({ path }) => isRegularFile(path)));
    candidates.forEach(({ name, path }, i) => {
      if (regular[i] && !voices.has(name)) voices.set(name, path);
    });
  }
  return voices;
}

/** Whether `path` is a regular file (symbolic links followed), without opening it. */
async function isRegularFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** The speaker file's bytes, refused past MAX_SPEAKER_FILE_BYTES without reading them all. */
export async function readSpeakerFile(path: string, name: string): Promise<Uint8Array> {
  const file = await open(path, "r");
  try {
    const { size } = await file.stat();
    if (size > MAX_SPEAKER_FILE_BYTES) throw new AudioInputError(`Cannot use voice "${name}": its file is ${size} bytes, more than the ${MAX_SPEAKER_FILE_BYTES} allowed`);
    const bytes = new Uint8Array(size);
    const { bytesRead } = await file.read(bytes, 0, size, 0);
    return bytes.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

export type VoiceChoice = { kind: "model" } | { kind: "file"; name: string; path: string } | { kind: "unknown"; available: string[] };

/** What `voice` asks for: a file, the model's own voice (no name, or an OpenAI name no file takes), or nothing known. */
export async function chooseVoice(voice: string | undefined, folders: readonly string[]): Promise<VoiceChoice> {
  if (voice === undefined || voice === "") return { kind: "model" };
  const voices = await listVoices(folders);
  const path = voices.get(voice);
  if (path) return { kind: "file", name: voice, path };
  if (OPENAI_VOICE_NAMES.includes(voice.toLowerCase())) return { kind: "model" };
  return { kind: "unknown", available: [...voices.keys()].slice(0, MAX_VOICES_LISTED) };
}

/** A voice that no speaker file and no OpenAI name answers to; the message names the voices there are. */
export class UnknownVoiceError extends AudioInputError {
  constructor(voice: string, available: string[], folders: readonly string[]) {
    const files = available.length > 0 ? `the speaker files ${available.map((name) => `"${name}"`).join(", ")}` : `no speaker files (add WAV, MP3 or FLAC files to ${folders.join(" or ")})`;
    super(`Voice "${voice}" is not available: this server has ${files}; OpenAI's names (${OPENAI_VOICE_NAMES.join(", ")}) or no voice use the model's own voice`);
    this.name = "UnknownVoiceError";
  }
}

/**
 * The reference voice `voice` asks for, looked up in `folders`: a speaker file's bytes, or undefined for
 * the model's own voice. The speech route and `llamux run --output` both resolve voices here. Throws
 * UnknownVoiceError for a name nothing answers to, AudioInputError for a file past the size limit.
 */
export async function resolveVoice(voice: string | undefined, folders: readonly string[]): Promise<Uint8Array | undefined> {
  const choice = await chooseVoice(voice, folders);
  if (choice.kind === "unknown") throw new UnknownVoiceError(voice!, choice.available, folders);
  return choice.kind === "file" ? readSpeakerFile(choice.path, choice.name) : undefined;
}
