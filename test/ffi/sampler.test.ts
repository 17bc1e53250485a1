// The shim's one-pass draw (top_k off: top_p, min_p, temperature and the pick without sorting the
// vocabulary) against llama.cpp's own samplers, which the chain uses when asked to (the reference):
// the same tokens for the same seed when nothing is cut, the same top-p/min-p cut-offs, draws that follow
// the softmax, and bias, penalties and grammars still applied before it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LlamaModel } from "../../ffi/llama.ts";
import { NO_TOKEN, SamplerChain, defaultSamplerSettings, matchesTokenIds, type SamplerSettings } from "../../ffi/sampler.ts";
import { loadNative } from "../../ffi/native.ts";
import { ensureModel } from "../../scripts/gen-models.ts";

let model: LlamaModel;
const chains: SamplerChain[] = [];

beforeAll(async () => {
  model = LlamaModel.load(await ensureModel("tiny-llama"));
});
afterAll(() => {
  for (const chain of chains) chain.dispose();
  model.dispose();
});

const noTruncation: Partial<SamplerSettings> = { topK: 0, topP: 1, minP: 0, temperature: 1 };

function chain(settings: Partial<SamplerSettings>, fullVocabularyDraw = true, grammarFirst = false): SamplerChain {
  const created = SamplerChain.create(model.vocab, model.trainedContextLength, { ...defaultSamplerSettings, ...settings }, { fullVocabularyDraw, grammarFirst });
  chains.push(created);
  return created;
}

/** Deterministic logits: `spread` wide, from a xorshift generator, so every run tests the same numbers. */
function randomLogits(length: number, seed: number, spread = 6): Float32Array {
  let state = seed >>> 0 || 1;
  return Float32Array.from({ length }, () => {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return (state / 0xffffffff - 0.5) * spread;
  });
}

function softmax(logits: ArrayLike<number>, temperature = 1): number[] {
  const max = Math.max(...Array.from(logits));
  const weights = Array.from(logits, (l) => Math.exp((l - max) / temperature));
  const sum = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => w / sum);
}

/** Pearson's chi-square statistic of observed counts against expected probabilities. */
function chiSquare(counts: number[], probabilities: number[], draws: number): number {
  return counts.reduce((sum, count, i) => sum + (count - draws * probabilities[i]!) ** 2 / (draws * probabilities[i]!), 0);
}

test("a temperature too small for a float is greedy, not a refused sampler", () => {
  const logits = randomLogits(model.vocab.size, 7);
  const best = logits.indexOf(Math.max(...logits));
  for (const fullVocabularyDraw of [true, false]) {
    expect(chain({ ...noTruncation, temperature: 5e-324 }, fullVocabularyDraw).sampleFrom(logits)).toBe(best);
  }
});

describe("full-vocabulary draw", () => {
  let cached: Float32Array[] | undefined;
  const stepLogits = () => (cached ??= Array.from({ length: 20 }, (_, i) => randomLogits(model.vocab.size, i + 1, 4)));

  test("picks the same tokens as llama.cpp's temperature and dist samplers for the same seed", () => {
    for (const temperature of [1, 0.7, 1.6]) {
      const fast = chain({ ...noTruncation, temperature, seed: 1234 });
      const reference = chain({ ...noTruncation, temperature, seed: 1234 }, false);
      const fastTokens: number[] = [];
      const referenceTokens: number[] = [];
      for (let step = 0; step < 100; step++) {
        const logits = stepLogits()[step % 20]!;
        fastTokens.push(fast.sampleFrom(logits));
        referenceTokens.push(reference.sampleFrom(logits));
      }
      expect(fastTokens).toEqual(referenceTokens);
      expect(new Set(fastTokens).size).toBeGreaterThan(50);
    }
  });

  test("the same seed gives the same tokens, another seed other tokens", () => {
    const run = (seed: number) => {
      const sampler = chain({ ...noTruncation, seed });
      return Array.from({ length: 100 }, (_, step) => sampler.sampleFrom(stepLogits()[step % 20]!));
    };
    expect(run(99)).toEqual(run(99));
    expect(run(99)).not.toEqual(run(100));
  });

  test("draws follow the softmax at the temperature (chi-square over 20,000 draws)", () => {
    const logits = randomLogits(24, 5, 4);
    for (const temperature of [1, 0.6]) {
      const sampler = chain({ ...noTruncation, temperature, seed: 7 });
      const counts = new Array<number>(logits.length).fill(0);
      const draws = 20_000;
      for (let i = 0; i < draws; i++) counts[sampler.sampleFrom(logits)]!++;
      // 23 degrees of freedom: 49.7 is the 0.1% critical value; a biased draw lands far above it.
      expect(chiSquare(counts, softmax(logits, temperature), draws)).toBeLessThan(49.7);
    }
  });

  test("the chi-square check catches a wrong temperature", () => {
    const logits = randomLogits(24, 5, 4);
    const sampler = chain({ ...noTruncation, temperature: 1, seed: 7 });
    const counts = new Array<number>(logits.length).fill(0);
    for (let i = 0; i < 20_000; i++) counts[sampler.sampleFrom(logits)]!++;
    expect(chiSquare(counts, softmax(logits, 0.8), 20_000)).toBeGreaterThan(49.7);
  });
});

describe("top-p and min-p without sorting", () => {
  const keptTokens = (sampler: SamplerChain, logits: Float32Array) => sampler.candidates(logits).kept.map((c) => c.token).sort((a, b) => a - b);

  const cases: Array<Partial<SamplerSettings>> = [
    { topP: 0.95 }, { topP: 0.5 }, { topP: 0.1 }, { topP: 0.999 }, { minP: 0.05 }, { minP: 0.3 },
    { topP: 0.9, minP: 0.05 }, { topP: 0.6, minP: 0.2, temperature: 0.7 },
  ];
  const shapes = [[1, 4], [2, 12], [3, 30], [4, 0.5]] as const;

  test("keep exactly the tokens llama.cpp's top_p and min_p samplers keep (2,000 candidates)", () => {
    for (const settings of cases) {
      for (const [seed, spread] of shapes) {
        const logits = randomLogits(2000, seed, spread);
        const fast = keptTokens(chain({ ...noTruncation, ...settings, seed: 1 }), logits);
        const reference = keptTokens(chain({ ...noTruncation, ...settings, seed: 1 }, false), logits);
        expect({ settings, spread, kept: fast }).toEqual({ settings, spread, kept: reference });
      }
    }
  });

  /** top_p and min_p by sorting, with the running sum in double: what the cut-off means. */
  function exactCut(logits: Float32Array, topP: number, minP: number): number[] {
    const sorted = Array.from(logits).sort((a, b) => b - a);
    const max = sorted[0]!;
    let threshold = minP > 0 ? Math.fround(max + Math.fround(Math.log(minP))) : -Infinity;
    if (topP < 1) {
      const weights = sorted.map((l) => Math.exp(l - max));
      const total = weights.reduce((a, b) => a + b, 0);
      let running = 0;
      for (let i = 0; i < weights.length; i++) {
        running += weights[i]!;
        if (running >= topP * total) {
          threshold = Math.max(threshold, sorted[i]!);
          break;
        }
      }
    }
    return Array.from(logits.keys()).filter((t) => logits[t]! >= threshold);
  }

  test("over the whole vocabulary: the exact cut, where llama.cpp's float running sum only drifts at the boundary", () => {
    for (const settings of cases) {
      for (const [seed, spread] of shapes) {
        const logits = randomLogits(model.vocab.size, seed, spread);
        const fast = keptTokens(chain({ ...noTruncation, ...settings, seed: 1 }), logits);
        expect({ settings, spread, kept: fast }).toEqual({ settings, spread, kept: exactCut(logits, settings.topP ?? 1, settings.minP ?? 0) });
        // llama.cpp sums ~10^5 float probabilities one by one; its set differs only by tokens at the cut's edge.
        const reference = keptTokens(chain({ ...noTruncation, ...settings, seed: 1 }, false), logits);
        const [smaller, larger] = fast.length <= reference.length ? [fast, reference] : [reference, fast];
        const inSmaller = new Set(smaller);
        const inLarger = new Set(larger);
        expect(smaller.every((t) => inLarger.has(t))).toBe(true);
        const lowest = Math.min(...smaller.map((t) => logits[t]!));
        expect(larger.every((t) => inSmaller.has(t) || logits[t]! <= lowest)).toBe(true);
        expect(larger.length - smaller.length).toBeLessThanOrEqual(Math.ceil(reference.length * 0.03));
      }
    }
  });

  test("a peaked distribution keeps only its top token, as llama.cpp does", () => {
    const logits = randomLogits(model.vocab.size, 9, 1);
    logits[17] = 40;
    for (const settings of [{ topP: 0.9 }, { minP: 0.1 }]) {
      expect(keptTokens(chain({ ...noTruncation, ...settings }), logits)).toEqual([17]);
      expect(keptTokens(chain({ ...noTruncation, ...settings }, false), logits)).toEqual([17]);
    }
  });

  test("draws stay inside the cut and follow the renormalised softmax", () => {
    const logits = randomLogits(40, 11, 5);
    const settings = { ...noTruncation, topP: 0.8, minP: 0.05, temperature: 0.9, seed: 3 };
    const kept = keptTokens(chain(settings, false), logits);
    expect(kept.length).toBeGreaterThan(3);
    expect(kept.length).toBeLessThan(40);
    const sampler = chain(settings);
    const counts = new Map<number, number>();
    const draws = 20_000;
    for (let i = 0; i < draws; i++) {
      const token = sampler.sampleFrom(logits);
      counts.set(token, (counts.get(token) ?? 0) + 1);
    }
    expect([...counts.keys()].sort((a, b) => a - b)).toEqual(kept);
    const probabilities = softmax(kept.map((t) => logits[t]!), 0.9);
    // kept.length - 1 degrees of freedom; 3.3 per degree is above the 0.1% critical value up to 40 of them.
    expect(chiSquare(kept.map((t) => counts.get(t)!), probabilities, draws)).toBeLessThan(3.3 * (kept.length - 1) + 10);
  });
});

describe("composition with the samplers before the draw", () => {
  test("logit bias: a banned token is never drawn, a favoured one always", () => {
    const logits = randomLogits(model.vocab.size, 21, 2);
    const favoured = chain({ ...noTruncation, seed: 5, logitBias: [[42, 100]] });
    const banned = chain({ ...noTruncation, seed: 5, logitBias: [[42, -Infinity]] });
    logits[42] = 30;
    for (let i = 0; i < 50; i++) {
      expect(favoured.sampleFrom(logits)).toBe(42);
      expect(banned.sampleFrom(logits)).not.toBe(42);
    }
  });

  test("penalties lower a repeated token as in llama.cpp's chain", () => {
    const logits = randomLogits(model.vocab.size, 23, 1);
    logits[300] = 12;
    const settings = { ...noTruncation, seed: 8, repeatPenalty: 1.0, presencePenalty: 30 };
    const fast = chain(settings);
    const reference = chain(settings, false);
    const fastTokens = Array.from({ length: 30 }, () => fast.sampleFrom(logits));
    const referenceTokens = Array.from({ length: 30 }, () => reference.sampleFrom(logits));
    expect(fastTokens).toEqual(referenceTokens);
    expect(fastTokens.filter((t) => t === 300)).toHaveLength(1);
  });

  test("a grammar's ruled-out tokens are never drawn, and a dead end is reported", () => {
    const digits = chain({ ...noTruncation, seed: 2, grammar: 'root ::= [0-9]+ "."' });
    const decoder = new TextDecoder();
    let text = "";
    for (let i = 0; i < 12; i++) {
      const token = digits.sampleFrom(randomLogits(model.vocab.size, 40 + i, 3));
      expect(token).not.toBe(NO_TOKEN);
      text += decoder.decode(model.vocab.tokenToPiece(token));
      if (text.endsWith(".")) break;
    }
    expect(text).toMatch(/^[0-9]+\.?$/);
    const endOfGeneration: Array<[number, number]> = [];
    for (let t = 0; t < model.vocab.size; t++) if (model.vocab.isEndOfGeneration(t)) endOfGeneration.push([t, -Infinity]);
    const done = chain({ ...noTruncation, seed: 2, grammar: 'root ::= "."', logitBias: endOfGeneration });
    const dot = Array.from(model.vocab.tokenize(".", { addSpecial: false }));
    expect(done.sampleFrom(randomLogits(model.vocab.size, 3))).toBe(dot[0]!);
    expect(done.sampleFrom(randomLogits(model.vocab.size, 4))).toBe(NO_TOKEN);
    // the same dead end under the default chain (top-k, top-p, min-p): the k highest allowed are none, and
    // top-p must not see an empty candidate list (llama.cpp aborts the process there)
    const truncated = chain({ ...defaultSamplerSettings, seed: 2, grammar: 'root ::= "."', logitBias: endOfGeneration });
    expect(truncated.sampleFrom(randomLogits(model.vocab.size, 3))).toBe(dot[0]!);
    expect(truncated.sampleFrom(randomLogits(model.vocab.size, 4))).toBe(NO_TOKEN);
  });

  test("a grammar checked after the pick (resampling only on rejection) draws from the softmax over the tokens it allows", () => {
    const letters = ["a", "b", "c", "d", "e"].map((letter) => Array.from(model.vocab.tokenize(letter, { addSpecial: false })));
    expect(letters.every((t) => t.length === 1)).toBe(true);
    const allowed = letters.map((t) => t[0]!);
    const logits = randomLogits(model.vocab.size, 77, 2);
    // The letters hold ~95% of the mass: most picks pass the one-token check, the rest are resampled with the
    // grammar over the whole vocabulary (tens of milliseconds each here, which is why the check comes first).
    const letterLogits = [13.2, 13.9, 12.5, 14.3, 13.6];
    allowed.forEach((token, i) => (logits[token] = letterLogits[i]!));
    const settings = { ...noTruncation, seed: 12, grammar: "root ::= [a-e]+" };
    // Allowed: the five letters and every token spelled with them ("ab", "dead", ...), at their random logits.
    const permitted = chain(settings).candidates(logits).kept.filter((c) => c.logit > -Infinity).map((c) => c.token);
    expect(permitted).toEqual(expect.arrayContaining(allowed));
    const others = permitted.filter((t) => !allowed.includes(t));
    const mass = softmax(permitted.map((t) => logits[t]!));
    const expected = [...allowed.map((t) => mass[permitted.indexOf(t)]!), others.reduce((sum, t) => sum + mass[permitted.indexOf(t)]!, 0)];
    const counts = new Array<number>(allowed.length + 1).fill(0);
    const draws = 2000;
    const sampler = chain(settings);
    for (let i = 0; i < draws; i++) {
      const token = sampler.sampleFrom(logits);
      expect(permitted).toContain(token);
      counts[allowed.includes(token) ? allowed.indexOf(token) : allowed.length]!++;
    }
    // 5 degrees of freedom (five letters and the rest): 20.5 is the 0.1% critical value.
    expect(chiSquare(counts, expected, draws)).toBeLessThan(20.5);
  });

  // A rejected pick is drawn again from the k highest tokens the grammar allows, found by checking the
  // highest candidates only (the shim's allowed_highest) instead of the whole vocabulary: the same
  // tokens llama.cpp's grammar-then-top-k keeps (the reference puts the grammar first in the chain).
  test("greedy under a grammar picks what the grammar-first chain picks, without checking every token", () => {
    const grammar = "root ::= [a-e]+";
    const shortcut = chain({ temperature: 0, grammar });
    const reference = chain({ temperature: 0, grammar }, true, true);
    for (let i = 0; i < 40; i++) {
      // the highest tokens are mostly not letters: nearly every first pick is rejected
      const logits = randomLogits(model.vocab.size, 500 + i, 8);
      expect(shortcut.sampleFrom(logits)).toBe(reference.sampleFrom(logits));
    }
  });

  test("top-k under a grammar draws as llama-server does: the chain's pick if allowed, else from the k highest allowed", () => {
    // lowercase words: a share of the vocabulary, as inside a JSON string, so the highest allowed are found early
    const grammar = "root ::= [a-z]+";
    const settings = { topK: 40, topP: 1, minP: 0, temperature: 1, seed: 31 };
    const logits = randomLogits(model.vocab.size, 901, 8);
    // the k highest allowed (the grammar first in the chain: llama.cpp's reference) and the k highest of all
    const permitted = chain({ ...settings, grammar }, true, true).candidates(logits).kept.filter((c) => c.logit > -Infinity);
    const highest = chain(settings).candidates(logits).kept;
    expect(permitted).toHaveLength(40);
    // a pick from the k highest of all is kept when allowed (then it is among the k highest allowed);
    // otherwise the draw is again, from the k highest allowed
    const pAll = softmax(highest.map((c) => c.logit));
    const pAllowed = softmax(permitted.map((c) => c.logit));
    const kept = new Map(highest.map((c, i) => [c.token, pAll[i]!]));
    const passing = permitted.reduce((sum, c) => sum + (kept.get(c.token) ?? 0), 0);
    const mass = permitted.map((c, i) => (kept.get(c.token) ?? 0) + (1 - passing) * pAllowed[i]!);
    // the five likeliest on their own, the other 35 together
    const order = permitted.map((_, i) => i).sort((a, b) => mass[b]! - mass[a]!);
    const buckets = order.slice(0, 5);
    const expected = [...buckets.map((i) => mass[i]!), order.slice(5).reduce((sum, i) => sum + mass[i]!, 0)];
    const counts = new Array<number>(6).fill(0);
    const draws = 2000;
    const sampler = chain({ ...settings, grammar });
    const tokens = permitted.map((c) => c.token);
    for (let i = 0; i < draws; i++) {
      const token = sampler.sampleFrom(logits);
      expect(tokens).toContain(token);
      const index = tokens.indexOf(token);
      counts[buckets.includes(index) ? buckets.indexOf(index) : 5]!++;
    }
    // 5 degrees of freedom: 20.5 is the 0.1% critical value
    expect(chiSquare(counts, expected, draws)).toBeLessThan(20.5);
  });
});

// The grammar's check of many tokens through groups of tokens by their first characters (ffi/shim.c, grammar_apply_grouped)
// against llama.cpp's own check of each token (the grammar first in the chain): the same tokens ruled out
// at every state of a walk through the grammar. The walk takes the lowest allowed id every other step:
// in this byte-level vocabulary those are single bytes, which leave a UTF-8 character open.
describe("a grammar's check of the whole vocabulary by prefix groups", () => {
  const grammars = [
    'root ::= [0-9]+ "."',
    'root ::= "{\\"name\\": \\"" [a-z]+ "\\", \\"age\\": " [0-9]+ "}"',
    'root ::= "é" [a-zé]* "日本語" [ \\t\\n]* "."',
    'root ::= [^"\\\\]* "\\""',
    "root ::= (\"yes\" | \"no\") # a comment with < and ! in it",
    'root ::= "a" <[64]> [a-z]*', // token ids: no groups, checked token by token
  ];

  function allowed(sampler: SamplerChain, logits: Float32Array): number[] {
    return sampler.candidates(logits).kept.filter((c) => c.logit > -Infinity).map((c) => c.token).sort((a, b) => a - b);
  }

  test.each(grammars)("%s", (grammar) => {
    const grouped = chain({ ...noTruncation, seed: 5, grammar });
    const reference = chain({ ...noTruncation, seed: 5, grammar }, true, true);
    const logits = randomLogits(model.vocab.size, 17, 4);
    let steps = 0;
    for (; steps < 14; steps++) {
      const expected = allowed(reference, logits);
      expect(allowed(grouped, logits)).toEqual(expected);
      const text = expected.filter((t) => !model.vocab.isEndOfGeneration(t));
      if (text.length === 0) break;
      const next = steps % 2 === 0 ? text[0]! : text[(steps * 7919) % text.length]!;
      grouped.accept(next);
      reference.accept(next);
    }
    expect(steps).toBeGreaterThan(1);
  });

  test("the vocabulary has groups to rule out, and only grammars without token ids use them", () => {
    expect(loadNative().shim.llamux_prefix_groups_count(model.vocab.prefixGroups())).toBeGreaterThan(1000);
    expect(matchesTokenIds('root ::= "a" <[64]>')).toBe(true);
    expect(matchesTokenIds("root ::= !<|im_end|>")).toBe(true);
    expect(matchesTokenIds('root ::= "<tool_call>" [<!>] "\\"<" # <not a token>\n')).toBe(false);
  });
});
