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

  test("recurrent models go back to the last mark before the prompt parts from the cache, when no checkpoint gives more", () => {
    const cached = Array.from({ length: 20 }, (_, i) => i);
    const parting = [...cached.slice(0, 13), 99, 98];
    expect(planReuse(cached, parting, false, 0, [4, 8, 12, 16])).toEqual({ keep: 12, fromCheckpoint: false, fromMark: true });
    // a checkpoint within the shared part that covers more wins; one covering less loses to the mark
    expect(planReuse(cached, parting, false, 13, [4, 8, 12])).toEqual({ keep: 13, fromCheckpoint: true });
    expect(planReuse(cached, parting, false, 6, [4, 8, 12])).toEqual({ keep: 12, fromCheckpoint: false, fromMark: true });
    // a mark leaves one prompt token to process (it carries no logits)
    expect(planReuse(cached, cached.slice(0, 12), false, 0, [4, 8, 12])).toEqual({ keep: 8, fromCheckpoint: false, fromMark: true });
    // a prompt the cache continues keeps all of it; attention models ignore marks
    expect(planReuse(cached.slice(0, 10), cached, false, 0, [4, 8])).toEqual({ keep: 10, fromCheckpoint: false });
    expect(planReuse(cached, parting, true, 0, [4, 8, 12])).toEqual({ keep: 13, fromCheckpoint: false });
    expect(planReuse(cached, [99, ...cached], false, 0, [4, 8])).toEqual({ keep: 0, fromCheckpoint: false });
  });

  test("commonPrefixLength", () => {
    expect(commonPrefixLength([1, 2, 3], [1, 2, 4])).toBe(2);
    expect(commonPrefixLength([], [1])).toBe(0);
  });
});
