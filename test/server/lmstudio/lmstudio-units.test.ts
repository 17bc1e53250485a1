// Profile c's pure translations: download names, LM Studio's stop reasons and the sampling defaults
// of the spec's server C column.
import { describe, expect, test } from "bun:test";
import { pullNameOf } from "../../../src/server/lmstudio/v1-download.ts";
import { lmStudioStopReason } from "../../../src/server/lmstudio/v0-stats.ts";
import { engineSettings } from "../../../src/options/engine-settings.ts";
import { mergeOptionValues } from "../../../src/options/values.ts";
import { readWireOptions } from "../../../src/options/wire-names.ts";
import { profiles } from "../../../src/server/profiles/index.ts";
import { ApiError } from "../../../src/server/api-error.ts";
import { requestedMaxTokens } from "../../../src/server/openai/max-tokens.ts";
import { jitAutoEvict } from "../../../src/config.ts";

const usage = (completionTokens: number) => ({ promptTokens: 5, cachedPromptTokens: 0, completionTokens, timeToFirstTokenMs: 1, promptMs: 1, decodeMs: 1, queueMs: 0 });

describe("pullNameOf", () => {
  test("LM Studio keys and hub URLs become hub store names", () => {
    expect(pullNameOf("org/repo", undefined)).toBe("hf.co/org/repo");
    expect(pullNameOf("org/repo", "Q8_0")).toBe("hf.co/org/repo:Q8_0");
    expect(pullNameOf("https://huggingface.co/org/repo", undefined)).toBe("hf.co/org/repo");
    expect(pullNameOf("https://huggingface.co/org/repo/blob/main/model-Q2_K.gguf", undefined)).toBe("hf.co/org/repo:model-Q2_K.gguf");
    expect(pullNameOf("https://hf.co/org/repo", "q4_k_m")).toBe("hf.co/org/repo:q4_k_m");
    expect(pullNameOf("hf.co/org/repo:Q4_K_M", "Q8_0")).toBe("hf.co/org/repo:Q8_0");
    expect(pullNameOf("llama3.2", undefined)).toBe("llama3.2");
  });

  test("http URLs, other sites and invalid names are refused", () => {
    for (const bad of ["http://huggingface.co/org/repo", "https://example.com/org/repo", "org/repo/with/parts/..", "bad name!"]) {
      expect(() => pullNameOf(bad, undefined)).toThrow(ApiError);
    }
  });
});

describe("lmStudioStopReason", () => {
  test("maps finish reasons to LM Studio's camelCase words", () => {
    expect(lmStudioStopReason({ finishReason: "stop", usage: usage(2) }, 10)).toBe("eosFound");
    expect(lmStudioStopReason({ finishReason: "stop", stop: "\n", usage: usage(2) }, 10)).toBe("stopStringFound");
    expect(lmStudioStopReason({ finishReason: "length", usage: usage(10) }, 10)).toBe("maxPredictedTokensReached");
    expect(lmStudioStopReason({ finishReason: "length", usage: usage(7) }, 10)).toBe("contextLengthReached");
    expect(lmStudioStopReason({ finishReason: "length", usage: usage(7) }, undefined)).toBe("contextLengthReached");
    expect(lmStudioStopReason({ finishReason: "tool_calls", usage: usage(7) }, undefined)).toBe("toolCalls");
    expect(lmStudioStopReason({ finishReason: "cancelled", usage: usage(1) }, undefined)).toBe("userStopped");
  });
});

describe("profile c sampling defaults", () => {
  test("server C's column: temperature 1, top_p 1, top_k 40, repeat_penalty 1; request fields win", () => {
    const sampling = (body: Record<string, unknown>) =>
      engineSettings(mergeOptionValues(profiles.c.openAiDefaults, readWireOptions(body, profiles.c.preferredWireNames))).sampling;
    expect(sampling({})).toMatchObject({ temperature: 1, topP: 1, topK: 40, repeatPenalty: 1 });
    expect(sampling({ top_k: 5, repeat_penalty: 1.3, temperature: 0.2 })).toMatchObject({ topK: 5, repeatPenalty: 1.3, temperature: 0.2 });
  });
});

describe("requestedMaxTokens", () => {
  test("-1 is no limit on profile c only; below the route's minimum is a 400", () => {
    expect(requestedMaxTokens(profiles.c, -1, 1)).toBe("unlimited");
    expect(requestedMaxTokens(profiles.c, 7, 1)).toBe(7);
    expect(requestedMaxTokens(profiles.c, undefined, 1)).toBeUndefined();
    expect(requestedMaxTokens(profiles.c, null, 1)).toBeUndefined();
    expect(requestedMaxTokens(profiles.a, 0, 0)).toBe(0);
    for (const [profile, value, min] of [[profiles.b, -1, 1], [profiles.a, -1, 0], [profiles.c, 0, 1], [profiles.c, -2, 0]] as const) {
      expect(() => requestedMaxTokens(profile, value, min)).toThrow(ApiError);
    }
  });
});

describe("jitAutoEvict", () => {
  test("on by default as in LM Studio; LLAMUX_JIT_AUTO_EVICT=0 turns it off; other values stop start-up", () => {
    expect(jitAutoEvict({})).toBe(true);
    expect(jitAutoEvict({ LLAMUX_JIT_AUTO_EVICT: "0" })).toBe(false);
    expect(jitAutoEvict({ LLAMUX_JIT_AUTO_EVICT: "true" })).toBe(true);
    expect(() => jitAutoEvict({ LLAMUX_JIT_AUTO_EVICT: "sometimes" })).toThrow("LLAMUX_JIT_AUTO_EVICT");
  });
});
