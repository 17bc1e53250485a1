import { describe, expect, test } from "bun:test";
import { commonPrefixLength, planReuse } from "../../../src/engine/planning/prefix-reuse.ts";

describe("planReuse", () => {
  test("attention models keep the common prefix but always leave one prompt token", () => {
    expect(planReuse([1, 2, 3, 4], [1, 2, 9], true)).toEqual({ keep: 2, fromCheckpoint: false });
    expect(planReuse([1, 2, 3], [1, 2, 3], true)).toEqual({ keep: 2, fromCheckpoint: false });
    expect(planReuse([], [1], true)).toEqual({ keep: 0, fromCheckpoint: false });
  });

  test("recurrent models keep only a cache the prompt continues", () => {
    expect(planReuse([1, 2, 3], [1, 2, 3, 4], false)).toEqual({ keep: 3, fromCheckpoint: false });
    expect(planReuse([1, 2, 3], [1, 2, 3], false)).toEqual({ keep: 0, fromCheckpoint: false });
    expect(planReuse([1, 2, 3, 4], [1, 2, 9], false)).toEqual({ keep: 0, fromCheckpoint: false });
  });

  test("recurrent models fall back to a checkpoint the prompt extends", () => {
    expect(planReuse([1, 2, 3, 4, 5], [1, 2, 3, 4], false, 3)).toEqual({ keep: 3, fromCheckpoint: true });
    expect(planReuse([1, 2, 3, 4, 5], [1, 2, 3, 7, 8], false, 3)).toEqual({ keep: 3, fromCheckpoint: true });
    // The same prompt again: the checkpoint covers all of it (it carries the last token's logits).
    expect(planReuse([1, 2, 3, 4, 5], [1, 2, 3], false, 3)).toEqual({ keep: 3, fromCheckpoint: true });
    // The prompt diverges before the checkpoint ends, or is shorter: nothing to reuse.
    expect(planReuse([1, 2, 3, 4, 5], [1, 2, 7], false, 3)).toEqual({ keep: 0, fromCheckpoint: false });
    expect(planReuse([1, 2, 3, 4, 5], [1, 2], false, 3)).toEqual({ keep: 0, fromCheckpoint: false });
  });

  test("commonPrefixLength", () => {
    expect(commonPrefixLength([1, 2, 3], [1, 2, 4])).toBe(2);
    expect(commonPrefixLength([], [1])).toBe(0);
  });
});
