// The prefix-source planner without a model: which of a sequence's memory, another sequence, host memory
// and disk gives a prompt its leading tokens.
import { describe, expect, test } from "bun:test";
import { choosePrefixSource, PROMPT_CACHE_MIN_TOKENS, type PrefixOffers } from "../../../src/engine/planning/prefix-source.ts";

const offers = (over: Partial<PrefixOffers<string, string>>): PrefixOffers<string, string> => ({
  own: { keep: 0, fromCheckpoint: false }, copies: [], sharedPool: false, hasImages: false, ...over,
});

describe("choosePrefixSource", () => {
  test("its own memory when nothing gives more", () => {
    expect(choosePrefixSource(offers({ own: { keep: 300, fromCheckpoint: false }, cache: { match: "m", keep: 310 } })).kind).toBe("own");
  });

  test("in one KV pool any longer copy is taken; across streams only a clear gain", () => {
    const copies = [{ from: "seq1", keep: 10 }];
    expect(choosePrefixSource(offers({ copies, sharedPool: true })).kind).toBe("copy");
    expect(choosePrefixSource(offers({ copies, sharedPool: false })).kind).toBe("own");
    expect(choosePrefixSource(offers({ copies: [{ from: "seq1", keep: PROMPT_CACHE_MIN_TOKENS }] })).kind).toBe("copy");
  });

  test("host memory over a shorter copy, by a clear margin", () => {
    const choice = choosePrefixSource(offers({ copies: [{ from: "seq1", keep: 1000 }], cache: { match: "ram", keep: 1000 + PROMPT_CACHE_MIN_TOKENS } }));
    expect(choice).toMatchObject({ kind: "cache", match: "ram" });
  });

  test("disk only over what host memory and the sequences give, by a clear margin", () => {
    expect(choosePrefixSource(offers({ cache: { match: "ram", keep: 11000 }, disk: { match: "file", keep: 11000 } })).kind).toBe("cache");
    expect(choosePrefixSource(offers({ cache: { match: "ram", keep: 3000 }, disk: { match: "file", keep: 11000 } }))).toMatchObject({ kind: "disk", match: "file" });
  });

  test("a prompt with images keeps its own memory only", () => {
    expect(choosePrefixSource(offers({ hasImages: true, disk: { match: "file", keep: 5000 } })).kind).toBe("own");
  });
});
