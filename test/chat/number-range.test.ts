// The integer grammars accept exactly the integers of their range, written without leading zeros. Read
// as regular expressions (these fragments only use literals, classes, groups, | and {m,n}), they are
// checked value by value around every boundary and digit length.
import { describe, expect, test } from "bun:test";
import { integerRange } from "../../src/chat/structured/number-range.ts";

/** A GBNF fragment of literals, classes, groups, alternation and repetition as a RegExp. */
function asRegExp(gbnf: string): RegExp {
  const source = gbnf.replace(/"([^"]*)"/g, (_, text: string) => text.replace(/[-.*+?^${}()|[\]\\]/g, "\\$&")).replace(/ /g, "");
  return new RegExp(`^(?:${source})$`);
}

/** Values around each boundary and each power of ten up to 16 digits, both signs. */
function probes(min: number | undefined, max: number | undefined): number[] {
  const values = new Set<number>();
  for (let power = 1; power <= 1e15; power *= 10) for (const v of [power - 1, power, power + 1]) values.add(v).add(-v);
  for (const bound of [min, max]) if (bound !== undefined) for (let d = -3; d <= 3; d++) values.add(bound + d);
  for (let v = -30; v <= 30; v++) values.add(v);
  return [...values].filter(Number.isSafeInteger);
}

const inRange = (v: number, min: number | undefined, max: number | undefined, digits = 15) =>
  (min === undefined || v >= min) && (max === undefined || v <= max) && String(Math.abs(v)).length <= digits;

describe("integerRange", () => {
  for (const [min, max] of [
    [undefined, undefined], [0, undefined], [1, undefined], [undefined, 0], [undefined, -1], [-12, 345], [7, 12345],
    [100, 99_999], [10, 99], [0, 9], [-99, -10], [5, 5], [1000, undefined], [undefined, 1_000_000], [123_456, 9_999_999],
  ] as Array<[number | undefined, number | undefined]>) {
    test(`[${min ?? "-∞"}, ${max ?? "∞"}]`, () => {
      const pattern = asRegExp(integerRange(min, max));
      for (const v of probes(min, max)) expect([v, pattern.test(String(v))]).toEqual([v, inRange(v, min, max)]);
      expect(pattern.test("007")).toBe(false); // no leading zeros
      expect(pattern.test("-0")).toBe(false);
    });
  }
});
