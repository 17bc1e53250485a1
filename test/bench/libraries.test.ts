// Which library build a directory holds, read from its VARIANT, and how the benchmark picks one per kind.
import { expect, test } from "bun:test";
import { type LibrarySet, libraryKindOf, selectLibrarySets } from "../../scripts/bench/libraries.ts";

test("each build's VARIANT names its kind", () => {
  expect(libraryKindOf("linux-x64-cpu")).toBe("prebuilt");
  expect(libraryKindOf("linux-x64-cuda")).toBe("prebuilt");
  expect(libraryKindOf("linux-x64-source-cpu")).toBe("source");
  expect(libraryKindOf("linux-x64-portable-cpu")).toBe("portable");
});

test("one set per requested kind, the first found winning; absent kinds are reported", () => {
  const sets: LibrarySet[] = [
    { kind: "prebuilt", dir: ".native/lib", variant: "linux-x64-cpu" },
    { kind: "portable", dir: ".native/lib-portable", variant: "linux-x64-portable-cpu" },
    { kind: "prebuilt", dir: ".native/lib-prebuilt", variant: "linux-x64-cpu" },
  ];
  const { selected, missing } = selectLibrarySets(["portable", "prebuilt", "source"], sets);
  expect(selected.map((s) => s.dir)).toEqual([".native/lib-portable", ".native/lib"]);
  expect(missing).toEqual(["source"]);
});
