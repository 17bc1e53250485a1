// The most context a request can get (what the server would grow a model to), and how a prompt beyond it
// is worded: the bound that stops it, and a setting only where one would change the outcome.
import { describe, expect, test } from "bun:test";
import { ContextLimitError } from "../../src/generation/chat-spec.ts";
import { contextCeiling } from "../../src/server/context-growth.ts";
import { profiles } from "../../src/server/profiles/index.ts";
import { promptTooLong } from "../../src/server/reply-limit.ts";

const GiB = 2 ** 30;
const loaded = (contextPerSequence: number, kvBytesPerToken = 2048) => ({ contextPerSequence, sharedContext: contextPerSequence, kvBytesPerToken });

describe("contextCeiling", () => {
  test("a growing model reaches its trained context where the memory holds it", () => {
    expect(contextCeiling({ trainedContext: 65536, grows: true, loaded: [loaded(4096)], configured: 4096, freeBytes: 8 * GiB }))
      .toEqual({ tokens: 65536, boundBy: "trained", trainedContext: 65536 });
    // not loaded yet: the trained context, the memory unknown
    expect(contextCeiling({ trainedContext: 65536, grows: true, loaded: [], configured: 4096, freeBytes: 0 }).boundBy).toBe("trained");
  });

  test("less where the memory free for its KV cache holds less (its own cache counts as free: growing drops it first)", () => {
    // 1 MiB a token: half of (24 MiB free + 4 MiB of its own cache) is 14 MiB, 14 tokens, under one 256-token block
    const tight = contextCeiling({ trainedContext: 65536, grows: true, loaded: [loaded(4, 2 ** 20)], configured: 4096, freeBytes: 24 * 2 ** 20 });
    expect(tight).toEqual({ tokens: 4, boundBy: "memory", trainedContext: 65536 });
    // 64 KiB a token: half of (2 GiB + its 256 MiB) is 18,432 tokens
    const some = contextCeiling({ trainedContext: 65536, grows: true, loaded: [loaded(4096, 2 ** 16)], configured: 4096, freeBytes: 2 * GiB });
    expect(some).toEqual({ tokens: 18432, boundBy: "memory", trainedContext: 65536 });
  });

  test("a model that does not grow has the context it is loaded with (or would be)", () => {
    expect(contextCeiling({ trainedContext: 65536, grows: false, loaded: [loaded(4096)], configured: 4096, freeBytes: 8 * GiB }))
      .toEqual({ tokens: 4096, boundBy: "setting", trainedContext: 65536 });
    expect(contextCeiling({ trainedContext: undefined, grows: true, loaded: [], configured: 2048, freeBytes: 8 * GiB })).toEqual({ tokens: 2048, boundBy: "setting" });
  });
});

describe("a prompt beyond the ceiling, in the agents' words", () => {
  const words = (profile: "a" | "b" | "c", error: ContextLimitError) => promptTooLong(profiles[profile], error).message;

  test("past the trained context: its size, and no setting (none would help)", () => {
    const error = new ContextLimitError("prompt", 95654, 65536, undefined, { tokens: 65536, boundBy: "trained", trainedContext: 65536 });
    for (const profile of ["a", "b", "c"] as const) {
      const message = words(profile, error);
      expect(message).toStartWith("prompt is too long: 95654 tokens > 65535 maximum (the model was trained for a context of 65536 tokens");
      expect(message).not.toMatch(/OLLAMA_CONTEXT_LENGTH|--ctx-size|--max-model-len|num_ctx/);
    }
  });

  test("past what the memory holds: says so, and names no setting", () => {
    const message = words("a", new ContextLimitError("prompt", 40000, 24576, undefined, { tokens: 24576, boundBy: "memory", trainedContext: 65536 }));
    expect(message).toStartWith("prompt is too long: 40000 tokens > 24575 maximum (the memory free for the model's KV cache holds 24576 tokens");
    expect(message).not.toMatch(/OLLAMA_CONTEXT_LENGTH|--ctx-size|num_ctx/);
  });

  test("under --max-model-len: a larger one that holds the prompt, within the trained context", () => {
    const message = words("b", new ContextLimitError("prompt", 6000, 4096, undefined, { tokens: 4096, boundBy: "setting", trainedContext: 65536 }));
    expect(message).toStartWith("prompt is too long: 6000 tokens > 4095 maximum");
    expect(message).toContain("start the server with --max-model-len 8192");
    const beyond = words("b", new ContextLimitError("prompt", 70000, 4096, undefined, { tokens: 4096, boundBy: "setting", trainedContext: 65536 }));
    expect(beyond).not.toContain("--max-model-len");
    expect(beyond).toContain("the model's context here is 4096 tokens and it was trained for 65536, the most it can have");
  });
});
