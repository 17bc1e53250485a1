// Which audio format bytes are, by their signature, as libmtmd's audio helper tells them apart.
export type AudioFormat = "wav" | "mp3" | "flac";

/** Formats by their file signature, as libmtmd's miniaudio decoder recognises them. */
export function sniffAudioFormat(bytes: Uint8Array): AudioFormat | undefined {
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (bytes.length >= 12 && ascii(0, 4) === "RIFF" && ascii(8, 12) === "WAVE") return "wav";
  if (bytes.length >= 4 && ascii(0, 4) === "fLaC") return "flac";
  if (bytes.length >= 3 && (ascii(0, 3) === "ID3" || (bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0))) return "mp3";
  return undefined;
}
