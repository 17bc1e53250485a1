// The n-gram (prompt lookup) drafter's search and the back-off pace, without a model.
import { describe, expect, test } from "bun:test";
import { lookupDraft } from "../../src/engine/speculative/ngram.ts";
import { DraftPace, PAUSE_MIN_TOKENS } from "../../src/engine/planning/draft-pace.ts";

describe("lookupDraft", () => {
  test("proposes what followed the latest earlier occurrence of the longest suffix", () => {
    // suffix [2, 3] occurred at 1..2 (followed by 9 9) and at 5..6 (followed by 7 8): the latest wins
    expect(lookupDraft([1, 2, 3, 9, 9, 2, 3, 7, 8, 2, 3], 3, 4, 1)).toEqual([7, 8, 2]);
  });

  test("prefers a longer match over a later shorter one", () => {
    // [5, 6, 3] matches at 0..2 (followed by 1); the shorter [6, 3] alone matches later at 4..5 (followed by 4)
    expect(lookupDraft([5, 6, 3, 1, 6, 3, 4, 5, 6, 3], 2, 3, 1)).toEqual([1, 6]);
  });

  test("is bounded by max and proposes nothing without a match", () => {
    expect(lookupDraft([1, 2, 3, 4, 5, 1], 2, 4, 1)).toEqual([2, 3]);
    expect(lookupDraft([1, 2, 3, 4], 4, 4, 1)).toEqual([]);
    expect(lookupDraft([1, 2, 3, 1, 2], 4, 4, 3)).toEqual([]);
  });
});

describe("DraftPace", () => {
  test("grows while everything is accepted and shrinks to what was accepted plus one", () => {
    const pace = new DraftPace(8);
    pace.length = 2;
    pace.settle(2, 2, 10);
    expect(pace.length).toBe(4);
    pace.settle(4, 1, 12);
    expect(pace.length).toBe(2);
  });

  test("a fruitless round pauses drafting, for longer each time", () => {
    const pace = new DraftPace(4);
    pace.settle(4, 0, 10);
    expect(pace.drafting(10 + PAUSE_MIN_TOKENS - 1)).toBe(false);
    expect(pace.drafting(10 + PAUSE_MIN_TOKENS)).toBe(true);
    pace.settle(1, 0, 30);
    expect(pace.drafting(30 + 2 * PAUSE_MIN_TOKENS - 1)).toBe(false);
    expect(pace.drafting(30 + 2 * PAUSE_MIN_TOKENS)).toBe(true);
    // a good round resets the pause
    pace.settle(1, 1, 70);
    pace.settle(2, 0, 72);
    expect(pace.drafting(72 + PAUSE_MIN_TOKENS)).toBe(true);
  });
});
