// Session hints: which conversation a request continues, read from the agents' headers and OpenAI's and
// Anthropic's body fields, in a fixed precedence, bounded in length.
import { describe, expect, test } from "bun:test";
import { MAX_SESSION_HINT_LENGTH, requestSchedule, sessionHint } from "../../src/server/session-hint.ts";

const headers = (entries: Record<string, string>) => new Headers(entries);

describe("sessionHint", () => {
  test("each source on its own, as the clients send it", () => {
    expect(sessionHint(headers({ "X-Claude-Code-Session-Id": "b88f5673" }))).toEqual({ session: "b88f5673", from: "x-claude-code-session-id header" });
    expect(sessionHint(headers({ "session-id": "01a21e6b" }))?.session).toBe("01a21e6b");
    expect(sessionHint(headers({ session_id: "older-codex" }))?.session).toBe("older-codex");
    expect(sessionHint(headers({}), { prompt_cache_key: "thread-7" })).toEqual({ session: "thread-7", from: "prompt_cache_key" });
    expect(sessionHint(headers({}), { user: "alice" })).toEqual({ session: "alice", from: "user" });
    const userId = JSON.stringify({ device_id: "4c3a", account_uuid: "", session_id: "b88f5673" });
    expect(sessionHint(headers({}), { metadata: { user_id: userId } })).toEqual({ session: userId, from: "metadata.user_id" });
  });

  test("headers before body fields; prompt_cache_key before user before metadata.user_id", () => {
    const all = { prompt_cache_key: "key", user: "alice", metadata: { user_id: "u" } };
    expect(sessionHint(headers({ "x-claude-code-session-id": "claude", "session-id": "codex" }), all)?.session).toBe("claude");
    expect(sessionHint(headers({ "session-id": "codex" }), all)?.session).toBe("codex");
    expect(sessionHint(headers({}), all)?.session).toBe("key");
    expect(sessionHint(headers({}), { user: "alice", metadata: { user_id: "u" } })?.session).toBe("alice");
  });

  test("empty, null and non-string values are no hint; a long one is kept as its digest", () => {
    expect(sessionHint(headers({ "session-id": " " }), { prompt_cache_key: null, user: "", metadata: { user_id: 42 } })).toBeUndefined();
    expect(requestSchedule(headers({}))).toEqual({});
    const long = "x".repeat(MAX_SESSION_HINT_LENGTH + 1);
    const hint = sessionHint(headers({}), { user: long })!.session;
    expect(hint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(sessionHint(headers({}), { user: long + "y" })!.session).not.toBe(hint);
    expect(requestSchedule(headers({ "session-id": "s1" }))).toEqual({ schedule: { session: "s1" } });
  });
});
