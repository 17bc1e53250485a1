// Entry point of the FFI layer: the typed wrappers over llama.cpp that the engine uses.
export { loadNative, backendDevices, computeSummary, amxKernelsLoaded, cpuBackendNote } from "./native.ts";
export { LlamaModel, type ModelLoadOptions } from "./model.ts";
export { LlamaVocab, type TokenizeOptions } from "./vocab.ts";
export { LlamaContext, DecodeStatus, type ContextOptions, type KvCacheType } from "./context.ts";
export { TokenBatch } from "./batch.ts";
export { SamplerChain, defaultSamplerSettings, type SamplerSettings } from "./sampler.ts";
export { quantizeModel, quantizationTypes, type QuantizationType } from "./quantize.ts";
export { DisposedError } from "./disposable.ts";
export { loadLoraAdapter, applyLoraAdapters, freeLoraAdapter, type LoraAdapter } from "./lora.ts";
