// Float PCM in [-1, 1] as signed 16-bit little-endian samples: the body of `pcm` and of a 16-bit WAV.

/** Clamps and rounds each sample to 16 bits (values outside [-1, 1] saturate). */
export function pcm16FromFloat(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const s = Math.max(-1, Math.min(1, samples[i]!));
    out[i] = Math.round(s < 0 ? s * 0x8000 : s * 0x7fff);
  }
  return out;
}

/** The samples' bytes, little-endian whatever the host. */
export function pcm16Bytes(samples: Float32Array): Uint8Array {
  const pcm = pcm16FromFloat(samples);
  const bytes = new Uint8Array(pcm.length * 2);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < pcm.length; i++) view.setInt16(i * 2, pcm[i]!, true);
  return bytes;
}
