// Audio lengths read from headers before anything is decoded (issue 31): libmtmd's decoder (miniaudio)
// allocates for the length a header states, so the server reads that length the way miniaudio does and
// refuses more than 300 s. Each length is compared with miniaudio's own count (the query the engine
// makes before decoding, ffi/audio-length.c), for real files, for hostile headers, and (fast-check) for
// mutated WAV and FLAC headers: whenever miniaudio would allocate for more than the limit, the server's
// reader refuses the file too.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { ptr } from "bun:ffi";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { libraryDir } from "../../ffi/library-dir.ts";
import { openMtmd } from "../../ffi/symbols.ts";
import { audioHeaderLength, checkAudioLength } from "../../src/audio/audio-duration.ts";
import { MAX_AUDIO_SECONDS } from "../../src/audio/audio-limits.ts";
import { AudioInputError, audioFromBase64 } from "../../src/audio/audio-source.ts";
import { speechFlac, speechWav, toneWav } from "./audio-fixtures.ts";
import { flacClaimingHugeLength, mp3ClaimingHugeLength, pcmWav, silentMp3, wavAt100Hz, wavAt1Hz } from "./hostile-audio.ts";

const { shim } = openMtmd(libraryDir());
const RATE = 16_000;

/** Seconds miniaudio would decode (at 16 kHz mono, as for a Whisper-style projector); undefined when it reads nothing. */
function decoderSeconds(bytes: Uint8Array): number | undefined {
  const out = new BigUint64Array(1);
  return shim.llamux_audio_decoded_frames(ptr(bytes), bytes.length, RATE, ptr(out)) ? Number(out[0]!) / RATE : undefined;
}

const headerSeconds = (bytes: Uint8Array) => {
  const length = audioHeaderLength(bytes);
  return "seconds" in length ? length.seconds : undefined;
};

/** A real MP3 from llama.cpp's source (libmtmd's own test clip). */
const realMp3 = () => new Uint8Array(readFileSync(join(import.meta.dir, "..", "..", ".native", "llama.cpp", "tools", "mtmd", "test-2.mp3")));

describe("lengths agree with miniaudio's", () => {
  test("real files: WAV, FLAC, MP3 (with an Info tag), silent MP3 frames", () => {
    for (const bytes of [speechWav(), speechFlac(), toneWav(3), realMp3(), silentMp3(100)]) {
      const decoded = decoderSeconds(bytes)!;
      expect(decoded).toBeGreaterThan(1);
      expect(headerSeconds(bytes)!).toBeCloseTo(decoded, 1);
    }
  });

  test("hostile headers: both read hours and more where the files hold seconds", () => {
    const cases: Array<[Uint8Array, number]> = [[wavAt1Hz(), 1e6], [wavAt100Hz(), 1e4], [flacClaimingHugeLength(), (2 ** 36 - 1) / 8000]];
    for (const [bytes, claimed] of cases) {
      expect(headerSeconds(bytes)!).toBeCloseTo(claimed, 0);
      expect(decoderSeconds(bytes)! / claimed).toBeCloseTo(1, 3);
    }
    // dr_mp3 multiplies the Xing count by the frame's samples in 32 bits: 97,391 s rather than the 1.1e8 claimed
    const mp3 = mp3ClaimingHugeLength();
    expect(headerSeconds(mp3)!).toBeCloseTo((2 ** 32 - 2) * 1152 / 44_100, 0);
    expect(decoderSeconds(mp3)!).toBeGreaterThan(90_000);
  });
});

describe("the server refuses them before decoding", () => {
  test("a 400-worthy AudioInputError saying how long the header says the clip is", () => {
    for (const bytes of [wavAt1Hz(), wavAt100Hz(), flacClaimingHugeLength(), mp3ClaimingHugeLength(), toneWav(301)]) {
      expect(() => checkAudioLength(bytes)).toThrow(AudioInputError);
      expect(() => audioFromBase64(Buffer.from(bytes).toString("base64"))).toThrow(`longer than the ${MAX_AUDIO_SECONDS} allowed`);
    }
    expect(() => checkAudioLength(wavAt1Hz())).toThrow("Cannot use audio: its header says 1.000e+6 seconds, longer than the 300 allowed");
    for (const bytes of [speechWav(), speechFlac(), realMp3(), pcmWav(8000, 8000 * 300)]) expect(() => checkAudioLength(bytes)).not.toThrow();
  });

  test("headers miniaudio would not read as that format are refused, not handed to its other decoders", () => {
    const noFmt = pcmWav(8000, 100);
    noFmt.set(new TextEncoder().encode("junk"), 12);
    expect(() => checkAudioLength(noFmt)).toThrow("no fmt chunk before the data");
    const zeroRate = pcmWav(0, 100);
    expect(() => checkAudioLength(zeroRate)).toThrow("sample rate 0 Hz");
    const notStreamInfo = flacClaimingHugeLength();
    notStreamInfo[4] = 0x84;
    expect(() => checkAudioLength(notStreamInfo)).toThrow("does not start with a STREAMINFO block");
    expect(() => checkAudioLength(new Uint8Array([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0, 1, 2, 3]))).toThrow("no MPEG audio frame");
  });
});

/** A WAV or FLAC header with some of its bytes replaced (the fields that state a length among them). */
const mutatedHeader = fc.record({
  base: fc.constantFrom<"wav" | "flac">("wav", "flac"),
  edits: fc.array(fc.record({ at: fc.nat({ max: 47 }), value: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 8 }),
});

test("fast-check: whenever miniaudio would decode more than the limit, the server refuses the file", () => {
  const wav = pcmWav(8000, 4000);
  const flac = flacClaimingHugeLength();
  flac.set([0, 0, 0, 0, 0x10], 13); // a FLAC that states 4096 samples
  let overLimit = 0;
  fc.assert(fc.property(mutatedHeader, ({ base, edits }) => {
    const bytes = (base === "wav" ? wav : flac).slice();
    for (const { at, value } of edits) bytes[at] = value;
    const decoded = decoderSeconds(bytes);
    if (decoded === undefined || decoded <= MAX_AUDIO_SECONDS) return;
    overLimit++;
    const header = audioHeaderLength(bytes);
    expect("problem" in header || header.seconds > MAX_AUDIO_SECONDS).toBe(true);
  }), { numRuns: 3000, seed: 31 });
  // the mutations do reach lengths over the limit (sample rates, sizes, sample counts)
  expect(overLimit).toBeGreaterThan(50);
});
