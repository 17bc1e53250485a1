// opusscript's Emscripten build of libopus (the package's own wrapper reads the .wasm from beside its
// script, which a compiled executable does not have; this loads the same build with the bytes given).
declare module "opusscript/build/opusscript_native_wasm.js" {
  export interface OpusScriptHandler {
    _encode(pcmPointer: number, samples: number, outPointer: number, frameSize: number): number;
    _encoder_ctl(ctl: number, value: number): number;
  }
  export interface OpusNative {
    OpusScriptHandler: {
      new (sampleRate: number, channels: number, application: number): OpusScriptHandler;
      destroy_handler(handler: OpusScriptHandler): void;
    };
    HEAPU8: Uint8Array;
    HEAPU16: Uint16Array;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
  }
  const factory: (module: { wasmBinary: Uint8Array }) => OpusNative;
  export default factory;
}
