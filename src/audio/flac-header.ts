// A FLAC file's length from its STREAMINFO block (sample rate and total samples per channel), which
// miniaudio's FLAC decoder (dr_flac, which libmtmd uses) takes as the length it allocates for.
import { headerProblem, type HeaderLength } from "./header-length.ts";

/** "fLaC", a metadata block header (type 0 = STREAMINFO, 34 bytes long), the block. */
const STREAMINFO_END = 4 + 4 + 34;

export function flacLength(bytes: Uint8Array): HeaderLength {
  if (bytes.length < STREAMINFO_END) return headerProblem("its FLAC header is cut short");
  const blockType = bytes[4]! & 0x7f;
  const blockSize = (bytes[5]! << 16) | (bytes[6]! << 8) | bytes[7]!;
  if (blockType !== 0 || blockSize !== 34) return headerProblem("its FLAC header does not start with a STREAMINFO block");
  const info = bytes.subarray(8, STREAMINFO_END);
  const sampleRate = (info[10]! << 12) | (info[11]! << 4) | (info[12]! >> 4);
  // 36 bits: 4 in byte 13, then 32
  const samples = (info[13]! & 0x0f) * 2 ** 32 + ((info[14]! << 24) >>> 0) + (info[15]! << 16) + (info[16]! << 8) + info[17]!;
  if (sampleRate === 0) return headerProblem("its FLAC sample rate is 0");
  // 0 means "unknown": the decoder then allocates nothing from the header
  return { seconds: samples / sampleRate };
}
