// Audio files whose headers promise far more than they hold (issue 31): libmtmd's decoder allocates
// for the length a header states before it decodes anything, so each of these would make it allocate
// gigabytes. Built byte by byte here: no encoder writes such headers.

/** A RIFF/WAVE file of 8-bit mono PCM at `sampleRate` with `dataBytes` of silence (one sample a byte). */
export function pcmWav(sampleRate: number, dataBytes: number): Uint8Array {
  const bytes = new Uint8Array(44 + dataBytes).fill(0x80, 44);
  const view = new DataView(bytes.buffer);
  const ascii = (at: number, text: string) => bytes.set(new TextEncoder().encode(text), at);
  ascii(0, "RIFF");
  view.setUint32(4, 36 + dataBytes, true);
  ascii(8, "WAVE");
  ascii(12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate, true); // byte rate
  view.setUint16(32, 1, true); // block align
  view.setUint16(34, 8, true); // bits per sample
  ascii(36, "data");
  view.setUint32(40, dataBytes, true);
  return bytes;
}

/** 1 MB at 1 Hz: a header that says 1,000,000 seconds (11.6 days). */
export const wavAt1Hz = () => pcmWav(1, 1_000_000);
/** 1 MB at 100 Hz: 10,000 seconds. */
export const wavAt100Hz = () => pcmWav(100, 1_000_000);

/** A FLAC file of about 100 KB whose STREAMINFO says 2^36 - 1 samples at 8 kHz (99 days); the rest is filler. */
export function flacClaimingHugeLength(): Uint8Array {
  const bytes = new Uint8Array(100_000);
  bytes.set(new TextEncoder().encode("fLaC"), 0);
  bytes.set([0x80, 0, 0, 34], 4); // last metadata block, STREAMINFO, 34 bytes
  const info = bytes.subarray(8, 42);
  info.set([0x10, 0x00, 0x10, 0x00]); // block sizes 4096
  // sample rate 8000 (20 bits), 1 channel (3 bits: 0), 16 bits a sample (5 bits: 15), total samples (36 bits)
  const sampleRate = 8000;
  info[10] = sampleRate >> 12;
  info[11] = (sampleRate >> 4) & 0xff;
  info[12] = ((sampleRate & 0x0f) << 4) | (0 << 1) | (15 >> 4);
  info[13] = ((15 & 0x0f) << 4) | 0x0f;
  info.set([0xff, 0xff, 0xff, 0xff], 14);
  return bytes;
}

/** MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, stereo, no CRC: 417-byte frames of 1152 samples. */
const FRAME_HEADER = [0xff, 0xfb, 0x90, 0x00];
const FRAME_BYTES = 417;

/** `frames` silent MP3 frames (all-zero side information and main data: every decoder reads silence). */
export function silentMp3(frames: number): Uint8Array {
  const bytes = new Uint8Array(frames * FRAME_BYTES);
  for (let i = 0; i < frames; i++) bytes.set(FRAME_HEADER, i * FRAME_BYTES);
  return bytes;
}

/**
 * An MP3 of 40 silent frames (1 s) whose first frame carries a Xing tag that says 2^32 - 2 frames (3.5
 * years; 2^32 - 1 would mean "no count" to dr_mp3): the decoder takes the tag's count as the length
 * without looking further.
 */
export function mp3ClaimingHugeLength(): Uint8Array {
  const bytes = silentMp3(40);
  const tag = 4 + 32; // after the header and a stereo MPEG-1 frame's side information
  bytes.set(new TextEncoder().encode("Xing"), tag);
  bytes.set([0, 0, 0, 0x01, 0xff, 0xff, 0xff, 0xfe], tag + 4); // flags: frame count present; the count
  return bytes;
}

/**
 * One second of the smallest MP3 frames there are (MPEG-2.5 Layer III at 8 kbit/s and 8 kHz: 72 bytes
 * for 72 ms), 96 KB of zeros, then 400 s more of them: the decoder skips the zeros and counts every
 * frame; a reader that gives up on junk sees one second.
 */
export function mp3WithFramesPastJunk(): Uint8Array {
  const frame = [0xff, 0xe3, 0x18, 0xc4];
  const head = 14, junk = 96 * 1024, tail = Math.ceil(400 / 0.072);
  const bytes = new Uint8Array((head + tail) * 72 + junk);
  for (let i = 0; i < head; i++) bytes.set(frame, i * 72);
  for (let i = 0, at = head * 72 + junk; i < tail; i++, at += 72) bytes.set(frame, at);
  return bytes;
}
