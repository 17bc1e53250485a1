// An MP3 file's length as miniaudio's MP3 decoder (dr_mp3, which libmtmd uses) takes it: the frame
// count a Xing or Info header in the first frame states (trusted as is, however large), else the sum of
// its frames' samples. Frames are walked by their headers, skipping bytes that are not a frame as the
// decoder does (within a window); the walk stops as soon as the length passes `stopAfterSeconds`.
// Free-format frames (no bitrate in the header) have no length here. What the walk cannot see, the
// engine's own check (miniaudio's count, src/engine/image-prompt.ts) does.
import { headerProblem, type HeaderLength } from "./header-length.ts";

interface FrameHeader {
  samples: number;
  sampleRate: number;
  /** 0 for a free-format frame. */
  bytes: number;
  /** Where a Xing/Info tag would start, from the frame's start. */
  tagOffset: number;
}

const SAMPLE_RATES = [[11025, 12000, 8000], [0, 0, 0], [22050, 24000, 16000], [44100, 48000, 32000]] as const;
// kbps by [MPEG-1 ? 0 : 1][layer I, II, III][index 1..14]
const BITRATES = [
  [
    [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
    [32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
    [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  ],
  [
    [32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
    [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
    [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  ],
] as const;

/**
 * The cheap part of a header check, inline in the scan: the sync bits, a version, a layer, a bitrate
 * (free format aside) and a sample rate. Most bytes that are not a frame fail here.
 */
function mayStartFrame(bytes: Uint8Array, at: number): boolean {
  const b1 = bytes[at + 1]!;
  const b2 = bytes[at + 2]!;
  return (b1 & 0xe0) === 0xe0 && (b1 & 0x18) !== 0x08 && (b1 & 0x06) !== 0 && (b2 & 0xf0) !== 0xf0 && (b2 & 0xf0) !== 0 && (b2 & 0x0c) !== 0x0c;
}

function frameHeader(bytes: Uint8Array, at: number): FrameHeader | undefined {
  if (at + 4 > bytes.length || bytes[at] !== 0xff || (bytes[at + 1]! & 0xe0) !== 0xe0) return undefined;
  const version = (bytes[at + 1]! >> 3) & 3; // 0 MPEG-2.5, 2 MPEG-2, 3 MPEG-1
  const layerBits = (bytes[at + 1]! >> 1) & 3; // 3 layer I, 2 layer II, 1 layer III
  const bitrateIndex = bytes[at + 2]! >> 4;
  const rateIndex = (bytes[at + 2]! >> 2) & 3;
  if (version === 1 || layerBits === 0 || bitrateIndex === 15 || rateIndex === 3) return undefined;
  const layer = 4 - layerBits;
  const mpeg1 = version === 3;
  const sampleRate = SAMPLE_RATES[version]![rateIndex]!;
  const padding = (bytes[at + 2]! >> 1) & 1;
  const mono = bytes[at + 3]! >> 6 === 3;
  const samples = layer === 1 ? 384 : layer === 3 && !mpeg1 ? 576 : 1152;
  let length = 0;
  if (bitrateIndex > 0) {
    const bitrate = BITRATES[mpeg1 ? 0 : 1][layer - 1]![bitrateIndex - 1]! * 1000;
    length = layer === 1 ? (Math.floor((12 * bitrate) / sampleRate) + padding) * 4 : Math.floor(((samples / 8) * bitrate) / sampleRate) + padding;
  }
  const crc = (bytes[at + 1]! & 1) === 0 ? 2 : 0;
  const sideInfo = mpeg1 ? (mono ? 17 : 32) : mono ? 9 : 17;
  return { samples, sampleRate, bytes: length, tagOffset: 4 + crc + sideInfo };
}

/** Bytes of an ID3v2 tag at the start (its header, body and optional footer), which the decoder skips. */
function id3Length(bytes: Uint8Array): number {
  if (bytes.length < 10 || bytes[0] !== 0x49 || bytes[1] !== 0x44 || bytes[2] !== 0x33) return 0;
  const size = ((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) | (bytes[9]! & 0x7f);
  return 10 + size + (bytes[5]! & 0x10 ? 10 : 0);
}

/** The frame count a Xing (VBR) or Info (CBR) tag in the frame states, if it has one. */
function taggedFrameCount(bytes: Uint8Array, at: number, header: FrameHeader): number | undefined {
  const tag = at + header.tagOffset;
  if (tag + 12 > bytes.length) return undefined;
  const id = String.fromCharCode(...bytes.subarray(tag, tag + 4));
  if ((id !== "Xing" && id !== "Info") || (bytes[tag + 7]! & 1) === 0) return undefined;
  return ((bytes[tag + 8]! << 24) >>> 0) + (bytes[tag + 9]! << 16) + (bytes[tag + 10]! << 8) + bytes[tag + 11]!;
}

/**
 * Bytes outside frames the walk skips in all before it gives up: scanning costs up to about 10 ns a byte
 * on the thread that serves HTTP, so the walk stays within a millisecond or so of junk (frames it jumps
 * over, and it stops at the limit's length). The engine's own count (miniaudio's, off that thread)
 * covers what lies beyond.
 */
const SKIP_BUDGET = 64 * 1024;

export function mp3Length(bytes: Uint8Array, stopAfterSeconds: number): HeaderLength {
  let seconds = 0;
  let first = true;
  let skipped = 0;
  const last = bytes.length - 4;
  for (let at = id3Length(bytes); at <= last;) {
    if (bytes[at] !== 0xff || !mayStartFrame(bytes, at)) {
      at++;
      if (++skipped > SKIP_BUDGET) break;
      continue;
    }
    const header = frameHeader(bytes, at)!;
    if (first) {
      first = false;
      const stated = taggedFrameCount(bytes, at, header);
      if (stated !== undefined) return { seconds: (stated * header.samples) / header.sampleRate };
    }
    seconds += header.samples / header.sampleRate;
    if (seconds > stopAfterSeconds) break;
    at += header.bytes;
  }
  if (first) return headerProblem("no MPEG audio frame was found at its start");
  return { seconds };
}
