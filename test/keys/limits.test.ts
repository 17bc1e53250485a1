// Named keys' limits and usage without a server, on a clock the test moves: rpm, tpm and tokens per day
// are reached, answer with the seconds until they pass, and pass once that time has gone by; usage survives
// a restart of its book.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { grantOf, type KeyGrant } from "../../src/keys/key-grant.ts";
import { expiryFrom } from "../../src/keys/key-expiry.ts";
import { limitReached } from "../../src/keys/rate-limits.ts";
import { RollingWindow } from "../../src/keys/rolling-window.ts";
import { UsageBook } from "../../src/keys/usage-book.ts";
import { KeyRequest } from "../../src/keys/key-request.ts";
import { KeyRefusal } from "../../src/keys/key-refusal.ts";

const dir = mkdtempSync(join(tmpdir(), "llamux-limits-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function clock(start = Date.parse("2025-03-01T12:00:00.500Z")) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

const grant = (limits: Partial<Parameters<typeof grantOf>[0]>): KeyGrant => grantOf({
  name: "alice", id: "00000000", hash: "$argon2id$x", scopes: ["chat"], created_at: new Date(0).toISOString(), ...limits,
});

describe("RollingWindow", () => {
  test("sums the last minute and says when the sum drops below a limit", () => {
    const window = new RollingWindow();
    const t = 1_000_000_000;
    window.add(3, t);
    window.add(2, t + 30_000);
    expect(window.sum(t + 30_000)).toBe(5);
    // below 5 once the first bucket (3) leaves, 60 s after it came
    expect(window.secondsUntilBelow(5, t + 30_000)).toBe(30);
    expect(window.secondsUntilBelow(1, t + 30_000)).toBe(60);
    expect(window.sum(t + 60_000)).toBe(2);
    expect(window.sum(t + 90_000)).toBe(0);
  });
});

describe("limits", () => {
  test("rpm: the request over the limit is refused with the wait, counted as refused, and passes after it", () => {
    const time = clock();
    const book = new UsageBook({ now: time.now });
    const work = () => new KeyRequest(grant({ rpm: 2 }), book);
    work().admit("chat", "chat");
    time.advance(10_000);
    work().admit("chat", "chat");
    let refusal: KeyRefusal | undefined;
    try {
      work().admit("chat", "chat");
    } catch (error) {
      refusal = error as KeyRefusal;
    }
    expect(refusal).toBeInstanceOf(KeyRefusal);
    expect(refusal!.status).toBe(429);
    expect(refusal!.detail).toEqual({ limit: "rpm", retryAfterSeconds: 50 });
    expect(refusal!.message).toContain("requests per minute (rpm): limit 2, used 2");
    expect(book.get("alice")).toMatchObject({ requests: 2, rateLimited: 1 });
    time.advance(50_000);
    expect(() => work().admit("chat", "chat")).not.toThrow();
    expect(book.get("alice").requests).toBe(3);
  });

  test("tpm counts prompt and completion tokens; the request that crosses it completes, the next waits", () => {
    const time = clock();
    const book = new UsageBook({ now: time.now });
    const g = grant({ tpm: 100 });
    const first = new KeyRequest(g, book);
    first.admit("chat", "chat");
    first.addSequence({ promptTokens: 70, completionTokens: 40, cachedTokens: 10 });
    first.finish({ promptTokens: 70, completionTokens: 40 });
    const refusal = limitReached(g, book);
    expect(refusal?.detail).toEqual({ limit: "tpm", retryAfterSeconds: 60 });
    expect(book.get("alice")).toMatchObject({ promptTokens: 70, completionTokens: 40, cachedTokens: 10, dayTokens: 110 });
    time.advance(60_000);
    expect(limitReached(g, book)).toBeUndefined();
  });

  test("tokens per day: refused until the next UTC midnight, then open again", () => {
    const time = clock(Date.parse("2025-03-01T23:58:00.000Z"));
    const book = new UsageBook({ now: time.now });
    const g = grant({ tokens_per_day: 50 });
    book.recordTokens("alice", { promptTokens: 30, completionTokens: 20 });
    time.advance(61_000); // past the minute, not the day
    expect(limitReached(g, book)?.detail).toEqual({ limit: "tokens_per_day", retryAfterSeconds: 59 });
    time.advance(59_000);
    expect(limitReached(g, book)).toBeUndefined();
    expect(book.get("alice")).toMatchObject({ day: "2025-03-02", dayTokens: 0, promptTokens: 30 });
  });

  test("a missing scope is a 403 naming it, checked before any limit and never counted", () => {
    const book = new UsageBook();
    const work = new KeyRequest(grant({ rpm: 1 }), book);
    expect(() => work.admit("admin", "call POST /api/pull")).toThrow('Missing scope "admin": API key "alice" cannot call POST /api/pull (its scopes: chat)');
    expect(book.get("alice")).toMatchObject({ requests: 0, rateLimited: 0 });
    // a route any key may call is not counted either
    work.admit("key", "read");
    expect(book.get("alice").requests).toBe(0);
  });

  test("only the sequences count when a request reports both", () => {
    const book = new UsageBook();
    const work = new KeyRequest(grant({}), book);
    work.addSequence({ promptTokens: 5, completionTokens: 2 });
    work.addSequence({ promptTokens: 5, completionTokens: 3 });
    work.finish({ promptTokens: 5, completionTokens: 5 });
    work.finish({ promptTokens: 5, completionTokens: 5 });
    expect(book.get("alice")).toMatchObject({ promptTokens: 10, completionTokens: 5 });
    const embedding = new KeyRequest(grant({}), book);
    embedding.finish({ promptTokens: 7, completionTokens: 0 });
    expect(book.get("alice").promptTokens).toBe(17);
  });
});

describe("UsageBook", () => {
  test("totals and today's tokens survive a restart; the minute does not", async () => {
    const path = join(dir, "keys.usage.json");
    const time = clock();
    const book = new UsageBook({ path, now: time.now, flushIntervalMs: 60_000 });
    book.recordRequest("alice");
    book.recordTokens("alice", { promptTokens: 12, completionTokens: 8, cachedTokens: 4 });
    book.recordRateLimited("bob");
    await book.flush();
    expect(JSON.parse(readFileSync(path, "utf8")).keys.alice).toMatchObject({ requests: 1, prompt_tokens: 12, day_tokens: 20 });
    const again = new UsageBook({ path, now: time.now });
    expect(again.owners()).toEqual(["alice", "bob"]);
    expect(again.get("alice")).toMatchObject({ requests: 1, promptTokens: 12, completionTokens: 8, cachedTokens: 4, dayTokens: 20 });
    expect(again.get("bob").rateLimited).toBe(1);
    expect(again.lastMinute("alice")).toEqual({ requests: 0, tokens: 0 });
  });

  test("the exit hook's write and a corrupt file", () => {
    const path = join(dir, "sync.usage.json");
    const book = new UsageBook({ path, flushIntervalMs: 60_000 });
    book.recordRequest("carol");
    book.flushSync();
    expect(new UsageBook({ path }).get("carol").requests).toBe(1);
    const broken = join(dir, "broken.usage.json");
    writeFileSync(broken, "{ not json");
    expect(new UsageBook({ path: broken }).owners()).toEqual([]);
  });
});

test("expiryFrom reads counts with a unit and ISO dates", () => {
  const now = Date.parse("2025-03-01T00:00:00.000Z");
  expect(expiryFrom("30d", now)).toBe("2025-03-31T00:00:00.000Z");
  expect(expiryFrom("12h", now)).toBe("2025-03-01T12:00:00.000Z");
  expect(expiryFrom("2026-01-01", now)).toBe("2026-01-01T00:00:00.000Z");
  expect(() => expiryFrom("soon", now)).toThrow(RangeError);
  expect(() => expiryFrom("2020-01-01", now)).toThrow("passed");
  expect(() => expiryFrom("0d", now)).toThrow("above zero");
});
