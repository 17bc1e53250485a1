// PushQueue: the one queue between the host's pushes and a reader, for generated events and speech chunks.
import { describe, expect, test } from "bun:test";
import { PushQueue } from "../../src/engine/push-queue.ts";

async function readAll<T>(values: AsyncIterable<T>): Promise<T[]> {
  const read: T[] = [];
  for await (const value of values) read.push(value);
  return read;
}

describe("PushQueue", () => {
  test("gives values pushed before and while reading, in order, then ends", async () => {
    const queue = new PushQueue<number>();
    queue.push(1);
    const reading = readAll(queue.values());
    queue.push(2);
    await Bun.sleep(1);
    queue.push(3);
    queue.end();
    queue.push(4);
    expect(await reading).toEqual([1, 2, 3]);
  });

  test("gives the pending values before throwing the failure", async () => {
    const queue = new PushQueue<string>();
    queue.push("a");
    queue.fail(new Error("engine stopped"));
    queue.end();
    const read: string[] = [];
    const reading = (async () => {
      for await (const value of queue.values()) read.push(value);
    })();
    await expect(reading).rejects.toThrow("engine stopped");
    expect(read).toEqual(["a"]);
  });

  test("a reader that leaves before the end abandons the queue", async () => {
    let abandoned = 0;
    const queue = new PushQueue<number>();
    queue.push(1);
    queue.push(2);
    for await (const value of queue.values(() => abandoned++)) if (value === 1) break;
    expect(abandoned).toBe(1);

    const waiting = new PushQueue<number>();
    const reader = waiting.values(() => abandoned++);
    const next = reader.next();
    waiting.push(5);
    expect(await next).toEqual({ value: 5, done: false });
    await reader.return(undefined);
    expect(abandoned).toBe(2);
  });

  test("a reader that leaves at the last value of an ended queue, or after a failure, abandons nothing", async () => {
    let abandoned = 0;
    const ended = new PushQueue<number>();
    ended.push(1);
    ended.end();
    for await (const _ of ended.values(() => abandoned++)) break;

    const failed = new PushQueue<number>();
    failed.fail(new Error("gone"));
    await readAll(failed.values(() => abandoned++)).catch(() => undefined);
    expect(abandoned).toBe(0);
  });
});
