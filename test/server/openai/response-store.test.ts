// The Responses API's store for previous_response_id is bounded by count and by size.
import { expect, test } from "bun:test";
import { ResponseStore } from "../../../src/server/openai/response-store.ts";

const turn = (text: string) => [{ role: "user", content: text }, { role: "assistant", content: "ok" }];

test("ResponseStore keeps the newest responses within its count", () => {
  const store = new ResponseStore({ maxResponses: 2 });
  store.put("k", "r1", turn("one"));
  store.put("k", "r2", turn("two"));
  store.put("k", "r3", turn("three"));
  expect(store.get("k", "r1")).toBeUndefined();
  expect(store.get("k", "r2")?.[0]?.content).toBe("two");
  expect(store.get("k", "r3")?.[0]?.content).toBe("three");
});

test("ResponseStore evicts the oldest past its byte budget and refuses one response larger than it", () => {
  const store = new ResponseStore({ maxBytes: 10_000 });
  store.put("k", "small", turn("x"));
  store.put("k", "big", turn("y".repeat(4_000)));
  expect(store.get("k", "small")).toBeDefined();
  store.put("k", "big2", turn("z".repeat(4_000)));
  expect(store.get("k", "small")).toBeUndefined();
  expect(store.get("k", "big")).toBeUndefined();
  expect(store.get("k", "big2")).toBeDefined();
  store.put("k", "huge", [{ role: "user", content: "h".repeat(6_000), images: [new Uint8Array(1)] }]);
  expect(store.get("k", "huge")).toBeUndefined();
  expect(store.get("k", "big2")).toBeDefined();
});

test("ResponseStore answers a response only to the owner that stored it", () => {
  const store = new ResponseStore();
  store.put("key-a", "r1", turn("mine"));
  expect(store.get("key-a", "r1")?.[0]?.content).toBe("mine");
  expect(store.get("key-b", "r1")).toBeUndefined();
  expect(store.get("", "r1")).toBeUndefined();
});

test("ResponseStore counts audio clips as it counts images, each clip once however many responses refer to it", () => {
  const store = new ResponseStore({ maxBytes: 100_000 });
  const clip = new Uint8Array(60_000);
  store.put("k", "r1", [{ role: "user", content: "listen", audio: [clip] }]);
  store.put("k", "r2", [{ role: "user", content: "listen", audio: [clip] }, { role: "assistant", content: "heard" }]);
  expect(store.get("k", "r1")).toBeDefined();
  expect(store.get("k", "r2")).toBeDefined();
  store.put("k", "r3", [{ role: "user", content: "another", audio: [new Uint8Array(60_000)] }]);
  expect(store.get("k", "r1")).toBeUndefined();
  expect(store.get("k", "r2")).toBeUndefined();
  expect(store.heldBytes).toBeLessThanOrEqual(100_000);
});
