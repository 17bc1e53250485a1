// WebRTC's voice-activity detector (libfvad) compiled to WebAssembly by Echogarden: the calls voice-activity.ts makes.
declare module "@echogarden/fvad-wasm" {
  export interface FvadNative {
    _fvad_new(): number;
    _fvad_free(instance: number): void;
    _fvad_set_mode(instance: number, mode: number): number;
    _fvad_set_sample_rate(instance: number, sampleRate: number): number;
    _fvad_process(instance: number, frame: number, length: number): number;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    HEAP16: Int16Array;
  }
  const factory: (module?: { wasmBinary?: Uint8Array }) => Promise<FvadNative>;
  export default factory;
}
