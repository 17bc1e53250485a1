import { describe, expect, test } from "bun:test";
import { isMark, MARK_SPACING, MAX_MARKS, markSpacing, markWithin, nextMarkAt, marksBefore, marksUpTo } from "../../../src/engine/planning/recurrent-marks.ts";
import { usableLength } from "../../../src/engine/prompt-cache/prefix-match.ts";

describe("recurrent marks", () => {
  test("the spacing is the micro-batch's 512 tokens until the context needs more than MAX_MARKS of them", () => {
    expect(markSpacing(2048)).toBe(MARK_SPACING);
    expect(markSpacing(MARK_SPACING * MAX_MARKS)).toBe(MARK_SPACING);
    expect(markSpacing(MARK_SPACING * MAX_MARKS + 1)).toBe(2 * MARK_SPACING);
    expect(markSpacing(131072)).toBe(512);
    expect(markSpacing(262144)).toBe(1024);
    // whatever the context, a sequence holds at most MAX_MARKS
    for (const context of [512, 4096, 40000, 131072, 262144]) expect(Math.floor(context / markSpacing(context))).toBeLessThanOrEqual(MAX_MARKS);
  });

  test("steps end at each mark inside the prompt, never at its end", () => {
    expect(nextMarkAt(0, 2000, 512)).toBe(512);
    expect(nextMarkAt(512, 2000, 512)).toBe(1024);
    expect(nextMarkAt(700, 2000, 512)).toBe(1024);
    expect(nextMarkAt(1536, 2000, 512)).toBe(0);
    expect(nextMarkAt(0, 512, 512)).toBe(0);
    expect(nextMarkAt(0, 513, 512)).toBe(512);
  });

  test("a state is a mark at a multiple of the spacing before the prompt's end", () => {
    expect(isMark(512, 2000, 512)).toBe(true);
    expect(isMark(1024, 2000, 512)).toBe(true);
    expect(isMark(0, 2000, 512)).toBe(false);
    expect(isMark(700, 2000, 512)).toBe(false);
    expect(isMark(1024, 1024, 512)).toBe(false);
  });

  test("the longest mark within a limit", () => {
    expect(markWithin([512, 1024, 1536], 1535)).toBe(1024);
    expect(markWithin([512, 1024, 1536], 1536)).toBe(1536);
    expect(markWithin([512, 1024], 511)).toBe(0);
    expect(markWithin([], 5000)).toBe(0);
  });

  test("a saved recurrent state serves a prompt that parts from it up to one of its marks", () => {
    const tokens = Array.from({ length: 10 }, (_, i) => i);
    expect(usableLength(tokens, false, [...tokens.slice(0, 7), 42], false, [3, 6, 9])).toBe(6);
    // all of its tokens and more: the whole state, marks or not
    expect(usableLength(tokens, false, [...tokens, 42], false, [3, 6, 9])).toBe(10);
    // the same prompt without logits: the last mark before its last token
    expect(usableLength(tokens, false, tokens, false, [3, 6, 9])).toBe(9);
    expect(usableLength(tokens, true, tokens, false, [3, 6, 9])).toBe(10);
    expect(usableLength(tokens, false, [...tokens.slice(0, 2), 42], false, [3, 6])).toBe(0);
  });
});

describe("marks kept with a length", () => {
  const marks = [{ length: 512 }, { length: 1024 }, { length: 1536 }];

  test("a sequence cut back to a mark's length keeps that mark", () => {
    expect(marksUpTo(marks, 1024).map((m) => m.length)).toEqual([512, 1024]);
    expect(marksUpTo(marks, 1023).map((m) => m.length)).toEqual([512]);
  });

  test("a saved state keeps the marks before its end, not one at its end (the state serves that)", () => {
    expect(marksBefore(marks, 1536).map((m) => m.length)).toEqual([512, 1024]);
    expect(marksBefore(marks, 2000).map((m) => m.length)).toEqual([512, 1024, 1536]);
  });
});
