// `llamux serve`'s speculative-decoding flags as options: llama-server's current names (--spec-*) beside its
// older ones and vLLM's --speculative-config, and a clear refusal for what llamux does not run.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { speculativeFromFlags } from "../../src/cli/speculative-flags.ts";

// Only the file's existence is checked here; loading it is the engine's job (tested end to end elsewhere).
const draftFile = join(import.meta.dir, "speculative-flags.test.ts");

describe("llama-server's current flag names", () => {
  test("--spec-type draft-simple with --spec-draft-model, -n-max and -p-min equal the older names", () => {
    const current = speculativeFromFlags({ "spec-type": "draft-simple", "spec-draft-model": draftFile, "spec-draft-n-max": "6", "spec-draft-p-min": "0.5" });
    const older = speculativeFromFlags({ "model-draft": draftFile, "draft-max": "6", "draft-p-min": "0.5" });
    expect(current).toEqual({ method: "draft", draftModelPath: draftFile, maxDraftTokens: 6, minDraftProbability: 0.5 });
    expect(current).toEqual(older!);
  });

  test("a draft model alone drafts; --spec-type none turns speculation off", () => {
    expect(speculativeFromFlags({ "spec-draft-model": draftFile })).toEqual({ method: "draft", draftModelPath: draftFile });
    expect(speculativeFromFlags({ "spec-type": "none", "spec-draft-model": draftFile, "spec-draft-n-max": "8" })).toBeUndefined();
    expect(speculativeFromFlags({})).toBeUndefined();
  });

  test("--spec-type ngram-simple is n-gram lookup: size-n the exact n-gram, size-m the tokens drafted", () => {
    expect(speculativeFromFlags({ "spec-type": "ngram-simple" })).toEqual({ method: "ngram" });
    expect(speculativeFromFlags({ "spec-type": "ngram-simple", "spec-ngram-simple-size-n": "3", "spec-ngram-simple-size-m": "8" }))
      .toEqual({ method: "ngram", ngramMax: 3, ngramMin: 3, maxDraftTokens: 8 });
    expect(speculativeFromFlags({ "spec-type": "none,ngram-simple" })).toEqual({ method: "ngram" });
  });
});

describe("refusals name the problem", () => {
  const refused: Array<[string, Parameters<typeof speculativeFromFlags>[0], RegExp]> = [
    ["a kind llamux does not run", { "spec-type": "draft-eagle3", "spec-draft-model": draftFile }, /--spec-type draft-eagle3 is not supported: llamux runs none, draft-simple, ngram-simple/],
    ["two kinds at once", { "spec-type": "draft-simple,ngram-simple", "spec-draft-model": draftFile }, /one kind of speculation at a time/],
    ["draft-simple without a draft model", { "spec-type": "draft-simple" }, /needs --spec-draft-model/],
    ["ngram-simple with a draft model", { "spec-type": "ngram-simple", "model-draft": draftFile }, /leave out the draft model/],
    ["n-gram sizes without ngram-simple", { "spec-ngram-simple-size-n": "3" }, /need --spec-type ngram-simple/],
    ["two names of one flag with different values", { "draft-max": "3", "spec-draft-n-max": "5", "model-draft": draftFile }, /--draft-max and --spec-draft-n-max are the same setting/],
    ["--speculative-config beside --spec-type", { "speculative-config": '{"method": "ngram"}', "spec-type": "ngram-simple" }, /both choose how to speculate/],
    ["a size beyond the bound", { "spec-type": "ngram-simple", "spec-ngram-simple-size-m": "48" }, /number of draft tokens must be an integer from 1 to 32, got 48/],
    ["a size that is not a number", { "spec-type": "ngram-simple", "spec-ngram-simple-size-n": "four" }, /Cannot use --spec-ngram-simple-size-n "four": not a number/],
    ["a draft file that does not exist", { "spec-draft-model": "/nonexistent/draft.gguf" }, /Cannot load draft model "\/nonexistent\/draft.gguf": no such file/],
    ["--draft-max without a draft", { "spec-draft-n-max": "4" }, /need --model-draft/],
  ];
  for (const [name, flags, message] of refused) {
    test(name, () => {
      expect(() => speculativeFromFlags(flags)).toThrow(message);
    });
  }
});
