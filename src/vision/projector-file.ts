// Finds the vision projector that belongs to a GGUF given by path: a sibling file named mmproj-*.gguf,
// as Hugging Face repositories and LM Studio lay them out. With several, the one whose name shares the
// most leading characters with the model's wins (mmproj-Foo-F16.gguf for Foo-Q4_K_M.gguf).
import { readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { ggufBool, readGgufHeaderSync } from "../store/gguf.ts";
import { kindAt } from "../store/regular-file.ts";

function sharedPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** The sibling projector of a model file, or undefined when there is none (or the file is itself one). */
export function siblingProjector(modelPath: string): string | undefined {
  const name = basename(modelPath);
  if (/^mmproj/i.test(name)) return undefined;
  let entries: string[];
  try {
    entries = readdirSync(dirname(modelPath));
  } catch {
    return undefined;
  }
  const stem = name.replace(/\.gguf$/i, "").toLowerCase();
  // only regular files: a FIFO named mmproj-*.gguf would block whatever opened it
  const candidates = entries.filter((entry) => /^mmproj[-_].*\.gguf$/i.test(entry) && kindAt(join(dirname(modelPath), entry))?.regular === true);
  if (candidates.length === 0) return undefined;
  const score = (entry: string) => sharedPrefix(entry.replace(/^mmproj[-_]/i, "").toLowerCase(), stem);
  const best = candidates.sort((a, b) => score(b) - score(a) || a.localeCompare(b))[0]!;
  return join(dirname(modelPath), best);
}

export interface ProjectorModalities {
  vision: boolean;
  /** Audio input. A text-to-speech projector has an audio encoder too (its speaker encoder, for reference voices). */
  audio: boolean;
  /** Audio output: a text-to-speech projector (clip.has_gen_audio_encoder). */
  speech: boolean;
}

const modalitiesByPath = new Map<string, ProjectorModalities>();

/**
 * What a projector file encodes, from its header (clip.has_vision_encoder, clip.has_audio_encoder), as
 * libmtmd decides mtmd_support_vision and mtmd_support_audio. An unreadable file counts as vision only
 * (what a projector meant before audio), so that loading it reports the real problem.
 */
export function projectorModalities(path: string): ProjectorModalities {
  let found = modalitiesByPath.get(path);
  if (!found) {
    try {
      const header = readGgufHeaderSync(path, { maxArrayLength: 0 });
      found = {
        vision: ggufBool(header, "clip.has_vision_encoder") ?? false,
        audio: ggufBool(header, "clip.has_audio_encoder") ?? false,
        speech: ggufBool(header, "clip.has_gen_audio_encoder") ?? false,
      };
    } catch {
      found = { vision: true, audio: false, speech: false };
    }
    modalitiesByPath.set(path, found);
  }
  return found;
}
