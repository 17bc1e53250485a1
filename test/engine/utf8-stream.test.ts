import { describe, expect, test } from "bun:test";
import { Utf8PieceDecoder } from "../../src/engine/utf8-stream.ts";

const bytes = (...values: number[]) => new Uint8Array(values);
const utf8 = (text: string) => new TextEncoder().encode(text);
const R = "\uFFFD";

/** Pushes each piece and returns what each push gave, plus the flush. */
function run(pieces: Uint8Array[]): { outputs: string[]; flushed: string; text: string } {
  const decoder = new Utf8PieceDecoder();
  const outputs = pieces.map((piece) => decoder.push(piece));
  const flushed = decoder.flush();
  return { outputs, flushed, text: outputs.join("") + flushed };
}

/** Splits `data` at the given cut positions. */
function split(data: Uint8Array, cuts: number[]): Uint8Array[] {
  const bounds = [0, ...cuts, data.length];
  return bounds.slice(1).map((end, i) => data.subarray(bounds[i], end));
}

describe("Utf8PieceDecoder: valid text", () => {
  test("ASCII passes straight through", () => {
    expect(run([utf8("Hello"), utf8(", "), utf8("world")]).outputs).toEqual(["Hello", ", ", "world"]);
  });

  test("empty pieces are harmless", () => {
    const decoder = new Utf8PieceDecoder();
    expect(decoder.push(new Uint8Array())).toBe("");
    expect(decoder.push(bytes(0xf0, 0x9f))).toBe("");
    expect(decoder.push(new Uint8Array())).toBe("");
    expect(decoder.push(bytes(0x98, 0x80))).toBe("😀");
    expect(decoder.flush()).toBe("");
  });

  test("emoji split over 2 pushes at every point", () => {
    const data = utf8("😀"); // F0 9F 98 80
    for (const cut of [1, 2, 3]) {
      const { outputs, flushed } = run(split(data, [cut]));
      expect(outputs).toEqual(["", "😀"]);
      expect(flushed).toBe("");
    }
  });

  test("emoji split over 3 pushes at every pair of points", () => {
    const data = utf8("😀");
    for (const [a, b] of [[1, 2], [1, 3], [2, 3]] as const) {
      expect(run(split(data, [a, b])).outputs).toEqual(["", "", "😀"]);
    }
  });

  test("emoji split over 4 pushes, one byte each", () => {
    expect(run(split(utf8("🦙"), [1, 2, 3])).outputs).toEqual(["", "", "", "🦙"]);
  });

  test("text before the split character is emitted at once", () => {
    const data = utf8("ok 👍"); // 3 ASCII bytes then 4 emoji bytes
    expect(run(split(data, [4, 5])).outputs).toEqual(["ok ", "", "👍"]);
  });

  test("CJK (3-byte) characters split across pieces", () => {
    const data = utf8("你好世界"); // 12 bytes
    expect(run(split(data, [1, 4, 8, 11])).outputs).toEqual(["", "你", "好", "世", "界"]);
  });

  test("2-byte characters, ZWJ sequences and a BOM survive any split", () => {
    const text = "\uFEFFé ß 👩‍👩‍👧 naïve 日本語 🇫🇷";
    const data = utf8(text);
    for (let cut = 0; cut <= data.length; cut++) {
      expect(run(split(data, [cut])).text).toBe(text);
    }
    expect(run([...data].map((b) => bytes(b))).text).toBe(text);
  });

  test("a leading U+FEFF produced by the model is kept", () => {
    expect(run([bytes(0xef, 0xbb), bytes(0xbf, 0x41)]).text).toBe("\uFEFFA");
  });
});

describe("Utf8PieceDecoder: invalid bytes", () => {
  test("a lone continuation byte becomes U+FFFD immediately", () => {
    expect(run([bytes(0x41, 0x80), bytes(0x42)]).outputs).toEqual([`A${R}`, "B"]);
  });

  test("a 4-byte lead followed by ASCII does not stall", () => {
    const { outputs, flushed } = run([bytes(0xf0), bytes(0x41), bytes(0x42)]);
    expect(outputs).toEqual(["", `${R}A`, "B"]);
    expect(flushed).toBe("");
  });

  test("a truncated sequence followed by ASCII gives one U+FFFD", () => {
    expect(run([bytes(0xf0, 0x9f, 0x98), bytes(0x41)]).outputs).toEqual(["", `${R}A`]);
  });

  test("a truncated sequence followed by a new valid character", () => {
    const pieces = [bytes(0xe4, 0xbd), utf8("好")]; // "你" cut short, then "好"
    expect(run(pieces).outputs).toEqual(["", `${R}好`]);
  });

  test("incomplete sequence at the end is flushed as one U+FFFD", () => {
    const { outputs, flushed } = run([utf8("hi"), bytes(0xf0, 0x9f, 0x98)]);
    expect(outputs).toEqual(["hi", ""]);
    expect(flushed).toBe(R);
  });

  test("bytes never valid in UTF-8 (C0, C1, F5..FF)", () => {
    expect(run([bytes(0xc0, 0xaf, 0xff, 0x41)]).outputs).toEqual([`${R}${R}${R}A`]);
    expect(run([bytes(0xf5, 0x80, 0x80, 0x80)]).text).toBe(R.repeat(4));
  });

  test("overlong, surrogate and out-of-range forms are rejected byte by byte", () => {
    expect(run([bytes(0xe0, 0x80, 0x80)]).text).toBe(R.repeat(3)); // overlong
    expect(run([bytes(0xed), bytes(0xa0), bytes(0x80)]).text).toBe(R.repeat(3)); // UTF-16 surrogate
    expect(run([bytes(0xf4, 0x90, 0x80, 0x80)]).text).toBe(R.repeat(4)); // > U+10FFFF
  });

  test("an invalid second byte is reported as soon as it arrives", () => {
    const decoder = new Utf8PieceDecoder();
    expect(decoder.push(bytes(0xe0))).toBe("");
    expect(decoder.push(bytes(0x80))).toBe(R + R); // E0 needs A0..BF next
    expect(decoder.flush()).toBe("");
  });

  test("flush resets the decoder for a new stream", () => {
    const decoder = new Utf8PieceDecoder();
    expect(decoder.push(bytes(0xf0, 0x9f))).toBe("");
    expect(decoder.flush()).toBe(R);
    expect(decoder.push(bytes(0x41))).toBe("A");
    expect(decoder.flush()).toBe("");
  });

  test("random bytes split randomly decode like the whole buffer at once", () => {
    let seed = 0x2545f491;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    // Bias towards bytes at the edges of the UTF-8 ranges.
    const edgy = [0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xe1, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff];
    for (let round = 0; round < 3000; round++) {
      const data = new Uint8Array(1 + Math.floor(random() * 16));
      for (let i = 0; i < data.length; i++) {
        data[i] = random() < 0.7 ? edgy[Math.floor(random() * edgy.length)]! : Math.floor(random() * 256);
      }
      const cuts: number[] = [];
      for (let at = 1; at < data.length; at++) if (random() < 0.5) cuts.push(at);
      const expected = new TextDecoder("utf-8", { ignoreBOM: true }).decode(data);
      expect(run(split(data, cuts)).text).toBe(expected);
    }
  });
});
