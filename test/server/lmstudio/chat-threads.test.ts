// LM Studio's /api/v1/chat threads are bounded by bytes as /v1/responses' stored responses are
// (256 MiB by default), and a thread refers to its images instead of holding copies: the threads of one
// conversation count an image once, and an image no kept thread refers to is let go.
import { expect, test } from "bun:test";
import { ChatThreads } from "../../../src/server/lmstudio/chat-threads.ts";
import type { ChatMessage } from "../../../src/chat/types.ts";

const MiB = 1024 * 1024;

function imageTurn(text: string, image: Uint8Array): ChatMessage[] {
  return [{ role: "user", content: text, images: [image] }, { role: "assistant", content: "A picture." }];
}

test("threads with an image each stay within the byte bound, and the images of dropped threads are let go", () => {
  const threads = new ChatThreads({ maxBytes: 16 * MiB });
  const alive: WeakRef<Uint8Array>[] = [];
  const ids: string[] = [];
  // Within a function, so that no local of this test keeps the images reachable.
  (() => {
    for (let i = 0; i < 60; i++) {
      const image = new Uint8Array(MiB).fill(i);
      alive.push(new WeakRef(image));
      ids.push(threads.save("", imageTurn(`Picture ${i}`, image)));
    }
  })();
  expect(threads.heldBytes).toBeLessThanOrEqual(16 * MiB);
  expect(threads.get("", ids[0]!)).toBeUndefined();
  expect(threads.get("", ids.at(-1)!)?.[0]?.images?.[0]?.[0]).toBe(59);
  Bun.gc(true);
  // The collector scans the stack conservatively, so an image or two may outlive their threads.
  const kept = alive.filter((ref) => ref.deref() !== undefined).length;
  expect(kept).toBeLessThanOrEqual(16 + 2);
});

test("by default the threads hold at most 256 MiB, as /v1/responses does", () => {
  const threads = new ChatThreads();
  // Untouched pages: large zeroed buffers cost address space, not memory.
  const ids = [0, 1, 2].map((i) => threads.save("", imageTurn(`Scan ${i}`, new Uint8Array(100 * MiB))));
  expect(threads.get("", ids[0]!)).toBeUndefined();
  expect(threads.get("", ids[1]!)).toBeDefined();
  expect(threads.get("", ids[2]!)).toBeDefined();
  expect(threads.heldBytes).toBeLessThanOrEqual(256 * MiB);
});

test("a conversation continued turn by turn counts its image once: every turn's thread is kept", () => {
  const threads = new ChatThreads({ maxBytes: 8 * MiB });
  let conversation = imageTurn("What is in this picture?", new Uint8Array(4 * MiB));
  const ids = [threads.save("", conversation)];
  for (let turn = 1; turn < 20; turn++) {
    // as /api/v1/chat continues a stored thread: its messages, then the new turn
    conversation = [...threads.get("", ids.at(-1)!)!, { role: "user", content: `And ${turn}?` }, { role: "assistant", content: "Still a picture." }];
    ids.push(threads.save("", conversation));
  }
  for (const id of ids) expect(threads.get("", id)).toBeDefined();
  expect(threads.heldBytes).toBeLessThan(5 * MiB);
});
