// Sonic (speech speed-up and slow-down without a pitch change) compiled to WebAssembly by Echogarden.
declare module "@echogarden/sonic-wasm" {
  export interface SonicNative {
    _sonicCreateStream(sampleRate: number, channels: number): number;
    _sonicDestroyStream(stream: number): void;
    _sonicSetSpeed(stream: number, speed: number): void;
    _sonicWriteFloatToStream(stream: number, samples: number, count: number): number;
    _sonicReadFloatFromStream(stream: number, samples: number, maxCount: number): number;
    _sonicFlushStream(stream: number): number;
    _sonicSamplesAvailable(stream: number): number;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    HEAPF32: Float32Array;
  }
  const factory: (module?: { wasmBinary?: Uint8Array }) => Promise<SonicNative>;
  export default factory;
}
