// A request's sampler settings as plain values, which SamplerChain turns into a llama.cpp sampler chain.

/**
 * A request's sampler settings, which the engine turns into a llama.cpp sampler chain; a value at its
 * "disabled" setting adds no sampler.
 */
export interface SamplerSettings {
  /** 0 (or below) means greedy. */
  temperature: number;
  seed: number;
  topK: number;
  topP: number;
  minP: number;
  typicalP: number;
  repeatPenalty: number;
  repeatLastN: number;
  frequencyPenalty: number;
  presencePenalty: number;
  dryMultiplier: number;
  dryBase: number;
  dryAllowedLength: number;
  dryLastN: number;
  drySequenceBreakers: string[];
  xtcProbability: number;
  xtcThreshold: number;
  /** 0 off, 1 Mirostat, 2 Mirostat 2.0. */
  mirostat: 0 | 1 | 2;
  mirostatTau: number;
  mirostatEta: number;
  logitBias: Array<[token: number, bias: number]>;
  /** GBNF grammar text, root rule "root". */
  grammar?: string;
}

