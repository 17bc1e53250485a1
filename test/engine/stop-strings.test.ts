import { describe, expect, test } from "bun:test";
import { StopStringMatcher, type StopMatch, type StopStringOptions } from "../../src/engine/stop-strings.ts";

interface Run {
  outputs: string[];
  text: string;
  stop?: StopMatch;
  /** How many pushes were consumed (the stop ends the run early). */
  pushed: number;
}

/** Feeds `pieces` until a stop matches, then flushes if none did. */
function run(stops: string[], pieces: string[], options?: StopStringOptions): Run {
  const matcher = new StopStringMatcher(stops, options);
  const outputs: string[] = [];
  for (const piece of pieces) {
    const result = matcher.push(piece);
    outputs.push(result.text);
    if (result.stop) return { outputs, text: outputs.join(""), stop: result.stop, pushed: outputs.length };
  }
  outputs.push(matcher.flush());
  return { outputs, text: outputs.join(""), pushed: pieces.length };
}

/** Every way to cut `s` into two non-empty pieces. */
const twoWaySplits = (s: string) => Array.from({ length: s.length - 1 }, (_, i) => [s.slice(0, i + 1), s.slice(i + 1)]);

describe("StopStringMatcher: basics", () => {
  test("no stops: text passes straight through", () => {
    expect(run([], ["a", "bc"]).outputs).toEqual(["a", "bc", ""]);
    expect(run(["", ""], ["a", "bc"]).outputs).toEqual(["a", "bc", ""]);
  });

  test("stop inside a single push", () => {
    const result = run(["</stop>"], ["Hello</stop>world"]);
    expect(result.text).toBe("Hello");
    expect(result.stop).toEqual({ index: 0, stop: "</stop>" });
  });

  test("stop at the very start emits nothing", () => {
    expect(run(["STOP"], ["STOP and more"])).toMatchObject({ text: "", stop: { stop: "STOP" } });
  });

  test("stop spread over many pushes", () => {
    const result = run(["</stop>"], ["Hi ", "</s", "to", "p>", "never seen"]);
    expect(result.outputs).toEqual(["Hi ", "", "", ""]);
    expect(result.stop).toEqual({ index: 0, stop: "</stop>" });
    expect(result.pushed).toBe(4);
  });

  test("stop split across two pushes at every split point", () => {
    const stop = "<|im_end|>";
    for (const [head, tail] of twoWaySplits(stop)) {
      const result = run([stop], ["answer " + head, tail + " trailing"]);
      expect(result.outputs).toEqual(["answer ", ""]);
      expect(result.stop).toEqual({ index: 0, stop });
    }
  });

  test("stop split into one piece per character", () => {
    const result = run(["###"], ["x", "#", "#", "#", "y"]);
    expect(result.outputs).toEqual(["x", "", "", ""]);
    expect(result.stop?.stop).toBe("###");
  });

  test("text after the stop in the same push is dropped", () => {
    expect(run(["\n\n"], ["one\n", "\ntwo"]).text).toBe("one");
  });

  test("only the possible start of a stop is held back", () => {
    const matcher = new StopStringMatcher(["</s>"]);
    expect(matcher.push("abc<")).toEqual({ text: "abc" });
    expect(matcher.push("/")).toEqual({ text: "" });
    expect(matcher.push("x")).toEqual({ text: "</x" });
    expect(matcher.flush()).toBe("");
  });
});

describe("StopStringMatcher: partial matches that fail", () => {
  test("a failed partial match is released in full and in order", () => {
    const result = run(["</stop>"], ["a</st", "o", "rm> b"]);
    expect(result.outputs).toEqual(["a", "", "</storm> b", ""]);
    expect(result.stop).toBeUndefined();
  });

  test("a failed partial match is released at every split point", () => {
    const stop = "</stop>";
    const text = "x</stoq>y";
    for (let cut = 1; cut < text.length; cut++) {
      expect(run([stop], [text.slice(0, cut), text.slice(cut)]).text).toBe(text);
    }
  });

  test("held-back text is returned by flush at the end", () => {
    const result = run(["</stop>"], ["done </st"]);
    expect(result.outputs).toEqual(["done ", "</st"]);
    expect(result.stop).toBeUndefined();
  });

  test("KMP case: stop 'aab' on input 'aaab'", () => {
    expect(run(["aab"], ["aaab"])).toMatchObject({ text: "a", stop: { stop: "aab" } });
    expect(run(["aab"], ["a", "a", "a", "b"])).toMatchObject({ outputs: ["", "", "a", ""], stop: { stop: "aab" } });
  });

  test("a failed match whose tail starts the real one: 'abab' + 'c' with stop 'ababc'", () => {
    const result = run(["ababc"], ["x", "ab", "ab", "ab", "c"]);
    expect(result.outputs).toEqual(["x", "", "", "ab", ""]);
    expect(result.stop?.stop).toBe("ababc");
  });

  test("a release never splits what could still start the stop", () => {
    const matcher = new StopStringMatcher(["aab"]);
    expect(matcher.push("aa").text).toBe("");
    expect(matcher.push("a").text).toBe("a"); // "aa" may still begin "aab"
    expect(matcher.push("a").text).toBe("a");
    expect(matcher.push("c").text).toBe("aac");
  });
});

describe("StopStringMatcher: several stops", () => {
  test("the stop that occurs is reported with its index", () => {
    const stops = ["User:", "\n\n", "<|eot_id|>"];
    expect(run(stops, ["Sure.", "\n", "\nUser:"]).stop).toEqual({ index: 1, stop: "\n\n" });
    expect(run(stops, ["Sure.<|eot", "_id|>"]).stop).toEqual({ index: 2, stop: "<|eot_id|>" });
  });

  test("overlapping candidates: stops 'ab' and 'bc' on 'abc'", () => {
    for (const pieces of [["abc"], ["a", "bc"], ["ab", "c"], ["a", "b", "c"]]) {
      expect(run(["bc", "ab"], pieces)).toMatchObject({ text: "", stop: { index: 1, stop: "ab" } });
    }
    expect(run(["ab", "bc"], ["xbc"])).toMatchObject({ text: "x", stop: { index: 1, stop: "bc" } });
  });

  test("same start: the shorter stop completes first and wins", () => {
    expect(run(["abcd", "ab"], ["xabcd"])).toMatchObject({ text: "x", stop: { stop: "ab" } });
  });

  test("the first stop to complete wins, even if a longer one started earlier", () => {
    expect(run(["abcd", "bc"], ["abcd"])).toMatchObject({ text: "a", stop: { stop: "bc" } });
  });

  test("stops completing at the same character: the longest wins", () => {
    expect(run(["</s>", "x</s>"], ["ax</s>"])).toMatchObject({ text: "a", stop: { index: 1, stop: "x</s>" } });
    expect(run(["x</s>", "</s>"], ["a", "x</", "s>"])).toMatchObject({ text: "a", stop: { index: 0 } });
  });

  test("duplicates report the first index", () => {
    expect(run(["", "END", "END"], ["theEND"]).stop).toEqual({ index: 1, stop: "END" });
  });

  test("hold back the longest possible start among all stops", () => {
    const matcher = new StopStringMatcher(["Observation:", "Obs"]);
    expect(matcher.push("x Ob").text).toBe("x ");
    expect(matcher.push("serve").stop?.stop).toBe("Obs");
  });
});

describe("StopStringMatcher: unicode", () => {
  test("emoji stop split between its surrogates", () => {
    const stop = "🛑";
    const result = run([stop], ["go go ", stop[0]!, stop[1]! + "!"]);
    expect(result.outputs).toEqual(["go go ", "", ""]);
    expect(result.stop?.stop).toBe(stop);
  });

  test("a different emoji with the same high surrogate is released whole", () => {
    // "🛑" and "🛒" share the high surrogate \uD83D.
    const matcher = new StopStringMatcher(["🛑"]);
    expect(matcher.push("a\uD83D").text).toBe("a");
    expect(matcher.push("\uDED2b").text).toBe("🛒b");
  });

  test("CJK and emoji stops at every split point", () => {
    for (const stop of ["停止", "🦙🦙", "終わり。"]) {
      for (const [head, tail] of twoWaySplits(stop)) {
        expect(run([stop], ["前" + head, tail + "後"])).toMatchObject({ text: "前", stop: { stop } });
      }
    }
  });
});

describe("StopStringMatcher: includeStopString", () => {
  const options = { includeStopString: true };

  test("the stop string ends the emitted text", () => {
    expect(run(["</s>"], ["hi</s>bye"], options)).toMatchObject({ text: "hi</s>", stop: { stop: "</s>" } });
  });

  test("works when the stop spans pushes", () => {
    const result = run(["</stop>"], ["Hi ", "</s", "to", "p>", "more"], options);
    expect(result.outputs).toEqual(["Hi ", "", "", "</stop>"]);
  });

  test("text after the stop is still dropped", () => {
    expect(run(["ab", "bc"], ["xabc"], options).text).toBe("xab");
  });
});

describe("StopStringMatcher: end of stream", () => {
  test("push after a stop throws", () => {
    const matcher = new StopStringMatcher(["."]);
    expect(matcher.push("end.").stop).toBeDefined();
    expect(matcher.stopped).toEqual({ index: 0, stop: "." });
    expect(() => matcher.push("more")).toThrow(/after a stop/);
    expect(matcher.flush()).toBe("");
  });

  test("push after flush throws; flush is idempotent", () => {
    const matcher = new StopStringMatcher(["STOP"]);
    expect(matcher.push("xST").text).toBe("x");
    expect(matcher.flush()).toBe("ST");
    expect(matcher.flush()).toBe("");
    expect(matcher.stopped).toBeUndefined();
    expect(() => matcher.push("OP")).toThrow(/after flush/);
  });

  test("the stops array may be changed by the caller afterwards", () => {
    const stops = ["END"];
    const matcher = new StopStringMatcher(stops);
    stops[0] = "X";
    expect(matcher.push("the END").stop?.stop).toBe("END");
  });
});

describe("StopStringMatcher: against a reference", () => {
  /** Reference: scan the whole text; first stop to complete wins, ties go to the longest. */
  function reference(stops: string[], text: string): { text: string; stop: string | undefined } {
    for (let end = 1; end <= text.length; end++) {
      const done = stops.filter((s) => s !== "" && text.slice(0, end).endsWith(s));
      if (done.length > 0) {
        const stop = done.reduce((a, b) => (b.length > a.length ? b : a));
        return { text: text.slice(0, end - stop.length), stop };
      }
    }
    return { text, stop: undefined };
  }

  /** Longest suffix of `text` that is a proper-or-full prefix of a stop. */
  const holdBack = (stops: string[], text: string) =>
    Math.max(0, ...stops.flatMap((s) => Array.from({ length: s.length }, (_, n) => n).filter((n) => n > 0 && text.endsWith(s.slice(0, n)))));

  test("random stops, text and splits agree with the reference and emit as early as possible", () => {
    let seed = 7;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const word = (max: number) => Array.from({ length: Math.floor(random() * max) }, () => "ab\uD83Dc"[Math.floor(random() * 3)]).join("");
    for (let round = 0; round < 3000; round++) {
      const stops = Array.from({ length: 1 + Math.floor(random() * 3) }, () => word(5));
      const text = word(20);
      const pieces: string[] = [];
      for (let at = 0; at < text.length; ) {
        const size = 1 + Math.floor(random() * 4);
        pieces.push(text.slice(at, at + size));
        at += size;
      }
      const matcher = new StopStringMatcher(stops);
      let emitted = "";
      let seen = "";
      let stop: string | undefined;
      for (const piece of pieces) {
        const result = matcher.push(piece);
        emitted += result.text;
        seen += piece;
        if (result.stop) {
          stop = result.stop.stop;
          break;
        }
        expect(emitted).toBe(seen.slice(0, seen.length - holdBack(stops, seen)));
      }
      if (stop === undefined) emitted += matcher.flush();
      expect({ text: emitted, stop }).toEqual(reference(stops, text));
    }
  });

  test("long generations: hold-back stays within the longest stop", () => {
    const stop = "a".repeat(1000) + "b";
    const matcher = new StopStringMatcher([stop, "zz"]);
    let emitted = 0;
    let pushed = 0;
    for (let i = 0; i < 20_000; i++) {
      const piece = i % 7 === 0 ? "z" : "aaaaaaaaaa"; // never completes either stop
      pushed += piece.length;
      emitted += matcher.push(piece).text.length;
      expect(pushed - emitted).toBeLessThan(stop.length);
    }
    expect(emitted + matcher.flush().length).toBe(pushed);
  });
});
