// The Speex resampler (SpeexDSP) compiled to WebAssembly by Echogarden: the calls resampler.ts makes.
declare module "@echogarden/speex-resampler-wasm" {
  export interface SpeexNative {
    _speex_resampler_init(channels: number, inRate: number, outRate: number, quality: number, error: number): number;
    _speex_resampler_destroy(state: number): void;
    _speex_resampler_skip_zeros(state: number): number;
    _speex_resampler_get_input_latency(state: number): number;
    _speex_resampler_process_float(state: number, channel: number, input: number, inputLength: number, output: number, outputLength: number): number;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    HEAPF32: Float32Array;
    HEAP32: Int32Array;
    HEAPU32: Uint32Array;
  }
  const factory: (module?: { wasmBinary?: Uint8Array }) => Promise<SpeexNative>;
  export default factory;
}
