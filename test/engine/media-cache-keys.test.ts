// The image encoder's cache keys: one per media chunk, telling apart the chunks libmtmd gives the same id
// (the 30-second parts of one clip, the slices of one tiled image) while copies of one item share them.
import { describe, expect, test } from "bun:test";
import { mediaCacheKeys } from "../../src/engine/image-prompt.ts";

describe("mediaCacheKeys", () => {
  test("the chunks of one clip get their part numbers", () => {
    expect(mediaCacheKeys(["clip"], ["clip", "clip", "clip"])).toEqual(["clip#0", "clip#1", "clip#2"]);
  });

  test("an image sent twice shares its key; different items keep their own", () => {
    expect(mediaCacheKeys(["a", "b", "a"], ["a", "b", "a"])).toEqual(["a#0", "b#0", "a#0"]);
  });

  test("two copies of a two-chunk clip share both keys, in order", () => {
    expect(mediaCacheKeys(["clip", "img", "clip"], ["clip", "clip", "img", "clip", "clip"])).toEqual(["clip#0", "clip#1", "img#0", "clip#0", "clip#1"]);
  });

  test("media without an id is never cached", () => {
    expect(mediaCacheKeys(["", "a"], ["", "a"])).toEqual(["", "a#0"]);
  });
});
