// The 44-byte RIFF header of a mono 16-bit PCM WAV file. WAV is a container around raw PCM, not a codec:
// the samples that follow it are pcm16Bytes. A stream whose length is not known yet states the largest
// sizes (0xFFFFFFFF), as streaming WAV writers do; decoders then read to the end of the data.

const HEADER_BYTES = 44;
const UNKNOWN_SIZE = 0xffffffff;

/** The header for `sampleCount` samples, or for a stream of unknown length when undefined. */
export function wavHeader(sampleRate: number, sampleCount: number | undefined): Uint8Array {
  const header = new Uint8Array(HEADER_BYTES);
  const view = new DataView(header.buffer);
  const ascii = (at: number, text: string) => { for (let i = 0; i < text.length; i++) header[at + i] = text.charCodeAt(i); };
  const dataBytes = sampleCount === undefined ? UNKNOWN_SIZE : sampleCount * 2;
  ascii(0, "RIFF");
  view.setUint32(4, sampleCount === undefined ? UNKNOWN_SIZE : HEADER_BYTES - 8 + dataBytes, true);
  ascii(8, "WAVE");
  ascii(12, "fmt ");
  view.setUint32(16, 16, true); // fmt chunk size
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true); // bytes per second
  view.setUint16(32, 2, true); // bytes per frame
  view.setUint16(34, 16, true); // bits per sample
  ascii(36, "data");
  view.setUint32(40, dataBytes, true);
  return header;
}
