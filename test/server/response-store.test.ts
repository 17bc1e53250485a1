// The Responses API's store for previous_response_id is bounded by count and by size.
import { expect, test } from "bun:test";
import { ResponseStore } from "../../src/server/openai/response-store.ts";

const turn = (text: string) => [{ role: "user", content: text }, { role: "assistant", content: "ok" }];

test("ResponseStore keeps the newest responses within its count", () => {
  const store = new ResponseStore({ maxResponses: 2 });
  store.put("r1", turn("one"));
  store.put("r2", turn("two"));
  store.put("r3", turn("three"));
  expect(store.get("r1")).toBeUndefined();
  expect(store.get("r2")?.[0]?.content).toBe("two");
  expect(store.get("r3")?.[0]?.content).toBe("three");
});

test("ResponseStore evicts the oldest past its byte budget and refuses one response larger than it", () => {
  const store = new ResponseStore({ maxBytes: 10_000 });
  store.put("small", turn("x"));
  store.put("big", turn("y".repeat(4_000)));
  expect(store.get("small")).toBeDefined();
  store.put("big2", turn("z".repeat(4_000)));
  expect(store.get("small")).toBeUndefined();
  expect(store.get("big")).toBeUndefined();
  expect(store.get("big2")).toBeDefined();
  store.put("huge", [{ role: "user", content: "h".repeat(6_000), images: [new Uint8Array(1)] }]);
  expect(store.get("huge")).toBeUndefined();
  expect(store.get("big2")).toBeDefined();
});
