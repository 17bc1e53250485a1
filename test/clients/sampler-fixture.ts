// What the XTC and DRY end-to-end tests share: the settings that make each sampler's effect visible on a
// random-weight model, and how a reply is judged to repeat itself.
//
// XTC at probability 1 and threshold 0 removes every candidate but the least likely one at each step, so
// with a fixed seed and a temperature above 0 its reply differs from the plain one, and it is the same
// every time. DRY only acts on a reply that repeats itself: greedy decoding with a repetition penalty
// below 1 (which rewards tokens already generated) makes the tiny model loop within a few tokens, and
// DRY with a high multiplier and an allowed length of 1 breaks the loop.
import { expect } from "bun:test";

/** XTC on at every step, removing all but the least likely candidate (Ollama and wire names alike). */
export const XTC = { xtc_probability: 1, xtc_threshold: 0 } as const;
/** A fixed seed with a temperature above 0: the plain reply is the same every time, and XTC is in the chain. */
export const SEEDED = { temperature: 0.7, seed: 42 } as const;
/** Greedy decoding rewarding tokens already out (repeat_penalty below 1): the reply loops. */
export const LOOPING = { temperature: 0, repeat_penalty: 0.5 } as const;
/**
 * DRY strong enough to break any repeat of one token or more, over the whole reply; the one sequence
 * breaker is a character the replies do not contain, so that no newline or colon lets a repeat through.
 */
export const DRY = { dry_multiplier: 3, dry_base: 1.75, dry_allowed_length: 1, dry_penalty_last_n: -1, dry_sequence_breakers: ["¶"] } as const;
/** Values each surface must refuse, by field. */
export const BAD_VALUES = [
  { field: "xtc_probability", value: 2 },
  { field: "dry_base", value: 0.5 },
  { field: "dry_sequence_breakers", value: [] },
] as const;

/** Tokens per reply: enough for a loop to show, short enough for a busy 2-core machine. */
export const REPLY_TOKENS = 32;

/** The longest text that occurs twice in `text` without overlapping itself. */
export function longestRepeat(text: string): string {
  const chars = [...text];
  for (let length = Math.floor(chars.length / 2); length > 0; length--) {
    for (let start = 0; start + 2 * length <= chars.length; start++) {
      const piece = chars.slice(start, start + length).join("");
      if (chars.slice(start + length).join("").includes(piece)) return piece;
    }
  }
  return "";
}

/**
 * The plain reply loops (the test is meaningless otherwise), and the reply with DRY is a different one
 * whose longest repeat is shorter.
 */
export function expectDryBrokeTheLoop(plain: string, withDry: string): void {
  const loop = longestRepeat(plain);
  if ([...loop].length < 12) throw new Error(`the plain reply does not loop, so DRY has nothing to break: ${JSON.stringify(plain)}`);
  expect(withDry).not.toBe(plain);
  expect([...longestRepeat(withDry)].length).toBeLessThan([...loop].length);
}

/** XTC changed the seeded reply, and gave the same reply twice. */
export function expectXtcChangedTheReply(plain: string, withXtc: string, withXtcAgain: string): void {
  expect(plain.length).toBeGreaterThan(0);
  expect(withXtc.length).toBeGreaterThan(0);
  expect(withXtc).not.toBe(plain);
  expect(withXtcAgain).toBe(withXtc);
}

/** Sampling settings under their wire names (Ollama's names for these are the same). */
export type Settings = Readonly<Record<string, number | readonly string[]>>;

/** One reply of REPLY_TOKENS tokens to a fixed prompt through one surface, with these settings. */
export type Reply = (settings: Settings) => Promise<string>;

/** The surface's XTC fields reach the engine: a seeded reply changes with them, and is the same twice. */
export async function expectXtcTakesEffect(reply: Reply): Promise<void> {
  const plain = await reply(SEEDED);
  const withXtc = await reply({ ...SEEDED, ...XTC });
  expectXtcChangedTheReply(plain, withXtc, await reply({ ...SEEDED, ...XTC }));
}

/** The surface's DRY fields reach the engine: a looping greedy reply stops looping with them. */
export async function expectDryTakesEffect(reply: Reply): Promise<void> {
  expectDryBrokeTheLoop(await reply(LOOPING), await reply({ ...LOOPING, ...DRY }));
}
