// A WAV file's length as miniaudio's WAV decoder (dr_wav, which libmtmd uses) computes it from the
// header: the fmt chunk's sample rate and frame size, the data chunk's size (cut to the bytes present),
// and for ADPCM the frame count a fact chunk states. Only chunks before the data chunk count, as in
// dr_wav. A header dr_wav would refuse is refused here too: miniaudio would otherwise try its other
// decoders on the same bytes.
import { headerProblem, type HeaderLength } from "./header-length.ts";

const PCM = 1, ADPCM = 2, IEEE_FLOAT = 3, ALAW = 6, MULAW = 7, DVI_ADPCM = 0x11, EXTENSIBLE = 0xfffe;
const SUPPORTED_ENCODINGS = new Set([PCM, ADPCM, IEEE_FLOAT, ALAW, MULAW, DVI_ADPCM]);
/** dr_wav's limits on the fmt chunk. */
const MAX_SAMPLE_RATE = 384_000, MAX_CHANNELS = 256, MAX_BITS_PER_SAMPLE = 64;

interface Format {
  encoding: number;
  channels: number;
  sampleRate: number;
  blockAlign: number;
  bitsPerSample: number;
}

function readFormat(view: DataView, at: number, size: number): Format | undefined {
  if (size < 16 || at + 16 > view.byteLength) return undefined;
  let encoding = view.getUint16(at, true);
  // WAVE_FORMAT_EXTENSIBLE: the encoding is the first two bytes of the sub-format GUID
  if (encoding === EXTENSIBLE) encoding = size >= 40 && at + 26 <= view.byteLength ? view.getUint16(at + 24, true) : 0;
  return {
    encoding, channels: view.getUint16(at + 2, true), sampleRate: view.getUint32(at + 4, true),
    blockAlign: view.getUint16(at + 12, true), bitsPerSample: view.getUint16(at + 14, true),
  };
}

function frameCount(format: Format, dataBytes: number, factFrames: number): number {
  const { encoding, channels, blockAlign, bitsPerSample } = format;
  if (encoding === ADPCM || encoding === DVI_ADPCM) {
    // 4-bit samples after a header per block (dr_wav's formula), or what the fact chunk says
    const blocks = Math.ceil(dataBytes / blockAlign);
    const headerBytes = blocks * (encoding === ADPCM ? 6 : 4) * channels;
    const computed = Math.floor((Math.max(0, dataBytes - headerBytes) * 2) / channels) + (encoding === DVI_ADPCM ? blocks : 0);
    return Math.max(computed, factFrames);
  }
  const bytesPerFrame = bitsPerSample % 8 === 0 ? (bitsPerSample * channels) / 8 : blockAlign;
  return Math.floor(dataBytes / bytesPerFrame);
}

export function wavLength(bytes: Uint8Array): HeaderLength {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let format: Format | undefined;
  let factFrames = 0;
  for (let offset = 12; offset + 8 <= bytes.length;) {
    const id = String.fromCharCode(...bytes.subarray(offset, offset + 4));
    const size = view.getUint32(offset + 4, true);
    if (id === "fmt ") {
      format = readFormat(view, offset + 8, size);
      if (!format) return headerProblem("its WAV fmt chunk is cut short");
    } else if (id === "fact" && offset + 12 <= bytes.length) {
      factFrames = view.getUint32(offset + 8, true);
    } else if (id === "data") {
      if (!format) return headerProblem("its WAV header has no fmt chunk before the data");
      const { encoding, channels, sampleRate, blockAlign, bitsPerSample } = format;
      if (!SUPPORTED_ENCODINGS.has(encoding)) return headerProblem(`its WAV encoding (format tag ${encoding}) is not one the decoder reads (PCM, float, A-law, µ-law, ADPCM)`);
      if (sampleRate === 0 || sampleRate > MAX_SAMPLE_RATE) return headerProblem(`its WAV sample rate ${sampleRate} Hz is outside 1 to ${MAX_SAMPLE_RATE}`);
      if (channels === 0 || channels > MAX_CHANNELS) return headerProblem(`its WAV channel count ${channels} is outside 1 to ${MAX_CHANNELS}`);
      if (bitsPerSample === 0 || bitsPerSample > MAX_BITS_PER_SAMPLE || blockAlign === 0) return headerProblem("its WAV sample size or block size is invalid");
      // dr_wav cuts a size beyond the end of the file (a streamed WAV's 0xFFFFFFFF included) to the bytes present
      const dataBytes = Math.min(size, bytes.length - offset - 8);
      const frames = frameCount(format, dataBytes, factFrames);
      if (!Number.isFinite(frames)) return headerProblem("its WAV frame size is zero");
      return { seconds: frames / sampleRate };
    }
    offset += 8 + size + (size % 2);
  }
  return headerProblem("its WAV header has no data chunk");
}
