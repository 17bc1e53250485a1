// The length of an audio file in seconds, read from its header without decoding it: WAV (the fmt
// chunk's byte rate and the data chunk's size) and FLAC (STREAMINFO's sample rate and sample count).
// MP3 has no such header field: undefined.
import { sniffAudioFormat } from "./audio-source.ts";

function wavSeconds(bytes: Uint8Array): number | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let byteRate: number | undefined;
  for (let offset = 12; offset + 8 <= bytes.length;) {
    const id = String.fromCharCode(...bytes.subarray(offset, offset + 4));
    const size = view.getUint32(offset + 4, true);
    if (id === "fmt " && offset + 20 <= bytes.length) byteRate = view.getUint32(offset + 16, true);
    if (id === "data") {
      if (!byteRate) return undefined;
      // a streamed WAV may say 0 or 0xFFFFFFFF: count what is there
      const dataBytes = size === 0 || size === 0xffffffff ? bytes.length - offset - 8 : Math.min(size, bytes.length - offset - 8);
      return dataBytes / byteRate;
    }
    offset += 8 + size + (size % 2);
  }
  return undefined;
}

function flacSeconds(bytes: Uint8Array): number | undefined {
  // "fLaC", then a metadata block header (4 bytes) whose first block is STREAMINFO (34 bytes)
  if (bytes.length < 8 + 18 || (bytes[4]! & 0x7f) !== 0) return undefined;
  const info = bytes.subarray(8);
  const sampleRate = (info[10]! << 12) | (info[11]! << 4) | (info[12]! >> 4);
  const samples = (info[13]! & 0x0f) * 2 ** 32 + ((info[14]! << 24) >>> 0) + (info[15]! << 16) + (info[16]! << 8) + info[17]!;
  if (!sampleRate || !samples) return undefined;
  return samples / sampleRate;
}

export function audioSeconds(bytes: Uint8Array): number | undefined {
  const format = sniffAudioFormat(bytes);
  if (format === "wav") return wavSeconds(bytes);
  if (format === "flac") return flacSeconds(bytes);
  return undefined;
}
