// The disk tier's files without a model: written whole and found by prefix, damaged or foreign files
// refused and removed (never handed on), the size cap kept across identities, and writes that fall
// behind dropped rather than piling up.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, writeFileSync, truncateSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DiskPromptStore, DISK_MIN_TOKENS } from "../../src/engine/prompt-cache/disk-store.ts";
import { readStateFile, writeStateFile, StateFileError } from "../../src/engine/prompt-cache/state-file.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "llamux-disk-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const KEY = "a".repeat(64);
const tokens = (start: number, length = DISK_MIN_TOKENS + 10) => Int32Array.from({ length }, (_, i) => start + i);
const state = (bytes: number, fill = 7) => new Uint8Array(bytes).fill(fill);
const saved = (start: number, bytes = 4096, length?: number) => ({ tokens: tokens(start, length), state: state(bytes), logits: undefined, session: undefined });
const files = (root = dir) => readdirSync(root, { recursive: true }).map(String).filter((name) => name.endsWith(".state"));

async function storeWith(options: Partial<Parameters<typeof DiskPromptStore.open>[0]> = {}, logged: string[] = []) {
  return DiskPromptStore.open({ dir, limitBytes: 64 * 1048576, key: KEY, canRollBack: true, log: (_, message) => logged.push(message), ...options });
}

describe("state files", () => {
  test("a written state reads back the same, with its logits and session", async () => {
    const path = join(dir, "one.state");
    const logits = Float32Array.from([0.5, -1, 2]);
    await writeStateFile(path, KEY, { tokens: tokens(1, 600), state: state(1000, 3), logits, session: "s1" });
    const back = await readStateFile(path, KEY);
    expect(Array.from(back.tokens)).toEqual(Array.from(tokens(1, 600)));
    expect(back.state).toEqual(state(1000, 3));
    expect(Array.from(back.logits!)).toEqual([0.5, -1, 2]);
    expect(back.session).toBe("s1");
  });

  test("a truncated, damaged or foreign file is refused with what is wrong", async () => {
    const path = join(dir, "one.state");
    await writeStateFile(path, KEY, saved(1));
    await expect(readStateFile(path, "b".repeat(64))).rejects.toThrow(/another model/);
    const bytes = readFileSync(path);
    bytes[bytes.length - 100]! ^= 0xff;
    writeFileSync(path, bytes);
    await expect(readStateFile(path, KEY)).rejects.toThrow(/checksum/);
    truncateSync(path, bytes.length - 10);
    await expect(readStateFile(path, KEY)).rejects.toThrow(/truncated/);
    writeFileSync(path, "not a state at all");
    await expect(readStateFile(path, KEY)).rejects.toBeInstanceOf(StateFileError);
  });
});

describe("marks on disk", () => {
  const mark = (length: number, fill: number) => ({ length, state: state(64, fill) });

  test("a state's marks are written, read back and indexed; a prompt parting from its tokens finds the last mark before", async () => {
    const store = await storeWith({ canRollBack: false });
    expect(store.enqueue({ ...saved(100, 4096, 1600), marks: [mark(512, 1), mark(1024, 2), mark(1536, 3)] })).toBe(true);
    await store.flush();
    const parting = Int32Array.from([...tokens(100, 1100), 7, 7, 7]);
    expect(store.find(parting)?.keep).toBe(1024);
    const reopened = await storeWith({ canRollBack: false });
    const match = reopened.find(parting)!;
    expect(match.keep).toBe(1024);
    const back = await reopened.load(match.entry);
    expect(back?.marks?.map((m) => m.length)).toEqual([512, 1024, 1536]);
    expect(back?.marks?.[1]!.state).toEqual(state(64, 2));
    expect(back?.state).toEqual(state(4096));
  });

  test("a header whose marks do not fit its tokens is refused; a damaged mark fails the checksum", async () => {
    const path = join(dir, "marks.state");
    await writeStateFile(path, KEY, { ...saved(1, 1000, 600), marks: [mark(512, 5)] });
    const bytes = readFileSync(path);
    bytes[bytes.length - 20]! ^= 0xff;
    writeFileSync(path, bytes);
    await expect(readStateFile(path, KEY)).rejects.toThrow(/checksum/);
    // a mark past the tokens: the header is edited, its length kept so that only the marks are wrong
    await writeStateFile(path, KEY, { ...saved(1, 1000, 600), marks: [mark(512, 5)] });
    const text = readFileSync(path).toString("latin1").replace('"length":512', '"length":900');
    writeFileSync(path, Buffer.from(text, "latin1"));
    await expect(readStateFile(path, KEY)).rejects.toThrow(/marks that do not fit/);
  });
});

describe("DiskPromptStore", () => {
  test("a queued state is written and found by the longest prefix, after a reopen too", async () => {
    const store = await storeWith();
    expect(store.enqueue(saved(100))).toBe(true);
    await store.flush();
    const prompt = Int32Array.from([...tokens(100), 9, 9, 9]);
    expect(store.find(prompt)?.keep).toBe(DISK_MIN_TOKENS + 10);
    const reopened = await storeWith();
    const match = reopened.find(prompt);
    expect(match?.keep).toBe(DISK_MIN_TOKENS + 10);
    const back = await reopened.load(match!.entry);
    expect(back?.state).toEqual(state(4096));
  });

  test("short states and states a file already serves are not written", async () => {
    const store = await storeWith();
    expect(store.enqueue(saved(1, 100, DISK_MIN_TOKENS - 1))).toBe(false);
    expect(store.enqueue(saved(1, 100, 800))).toBe(true);
    expect(store.enqueue(saved(1, 100, 700))).toBe(false);
    await store.flush();
    expect(store.stats().written).toBe(1);
  });

  test("damaged files are skipped with a log line and removed, at open and at load; nothing is handed on", async () => {
    const first = await storeWith();
    for (const start of [1000, 5000, 9000]) first.enqueue(saved(start));
    await first.flush();
    const paths = files().map((name) => join(dir, name));
    expect(paths).toHaveLength(3);
    truncateSync(paths[0]!, 50);
    writeFileSync(paths[1]!, "garbage");
    const logged: string[] = [];
    const store = await storeWith({}, logged);
    expect(store.stats().entries).toBe(1);
    expect(logged.filter((line) => line.includes("skipped"))).toHaveLength(2);
    // the third is damaged after indexing: its load is refused
    const bytes = readFileSync(paths[2]!);
    bytes[200]! ^= 0x55;
    writeFileSync(paths[2]!, bytes);
    const match = [1000, 5000, 9000].map((start) => store.find(Int32Array.from([...tokens(start), 1]))).find((m) => m !== undefined);
    expect(match?.entry.path).toBe(paths[2]!);
    expect(await store.load(match!.entry)).toBeUndefined();
    expect(store.stats().entries).toBe(0);
    expect(store.stats().failed).toBe(3);
    await Bun.sleep(50);
    expect(files()).toHaveLength(0);
  });

  test("another identity's files are never offered", async () => {
    const mine = await storeWith();
    mine.enqueue(saved(1));
    await mine.flush();
    const other = await storeWith({ key: "c".repeat(64) });
    expect(other.find(Int32Array.from([...tokens(1), 5]))).toBeUndefined();
  });

  test("the cap holds across identities: least recently used files go first", async () => {
    const bytes = 200_000;
    const limit = 3 * (bytes + 4000);
    const a = await storeWith({ limitBytes: limit });
    const b = await storeWith({ limitBytes: limit, key: "d".repeat(64) });
    // file times come from the kernel's coarse clock (a tick of up to 10 ms): writes a tick apart keep their order
    const tick = () => Bun.sleep(25);
    a.enqueue(saved(1, bytes));
    await a.flush();
    await tick();
    b.enqueue(saved(20_000, bytes));
    await b.flush();
    await tick();
    a.enqueue(saved(40_000, bytes));
    await a.flush();
    await tick();
    b.enqueue(saved(60_000, bytes));
    await b.flush();
    const total = files().reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
    expect(total).toBeLessThanOrEqual(limit);
    expect(files()).toHaveLength(3);
    // the oldest file (a's first) went, though b wrote last: a finds out when it reads it, and hands nothing on
    const stale = a.find(Int32Array.from([...tokens(1), 0]));
    expect(stale).toBeDefined();
    expect(await a.load(stale!.entry)).toBeUndefined();
    expect(a.find(Int32Array.from([...tokens(1), 0]))).toBeUndefined();
    expect(a.find(Int32Array.from([...tokens(40_000), 0]))).toBeDefined();
  });

  test("under 1,000 distinct states the tier stays within its cap", async () => {
    const limit = 2 * 1048576;
    const store = await storeWith({ limitBytes: limit });
    for (let i = 0; i < 1000; i++) {
      store.enqueue(saved(i * 10_000, 16_384));
      if (i % 50 === 49) await store.flush();
    }
    await store.flush();
    const total = files().reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
    expect(total).toBeLessThanOrEqual(limit);
    expect(store.stats().bytes).toBeLessThanOrEqual(limit);
    expect(store.stats().evicted).toBeGreaterThan(800);
  });
});
