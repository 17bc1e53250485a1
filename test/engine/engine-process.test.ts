// Engine child processes: crash isolation, reload after a crash, cancellation over IPC, and children
// that never outlive their parent (SIGKILL) or survive its SIGTERM.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ModelManager } from "../../src/engine/model-manager.ts";
import type { EngineEvent } from "../../src/engine/types.ts";
import { ensureModel } from "../../scripts/gen-models.ts";

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (condition()) return true;
    await Bun.sleep(50);
  }
  return condition();
}

/** Starts test/fixtures/engine-host.ts and reads its JSON lines. */
function startHost(modelPath: string) {
  const host = Bun.spawn([process.execPath, join(import.meta.dir, "..", "fixtures", "engine-host.ts"), modelPath], { stdout: "pipe", stderr: "inherit" });
  const facts: Record<string, unknown>[] = [];
  void (async () => {
    let buffer = "";
    for await (const chunk of host.stdout) {
      buffer += new TextDecoder().decode(chunk);
      let newline: number;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        facts.push(JSON.parse(buffer.slice(0, newline)));
        buffer = buffer.slice(newline + 1);
      }
    }
  })();
  return { host, facts };
}

describe("engine child process", () => {
  let modelPath: string;
  const manager = new ModelManager();
  beforeAll(async () => {
    modelPath = await ensureModel("tiny-llama");
  });
  afterAll(() => manager.stopAll());

  test("streams a generation and reports model info", async () => {
    const engine = await manager.engine({ modelPath, parallel: 2, contextPerSequence: 256, threads: 2 });
    expect(engine.info.architecture).toBe("llama");
    expect(engine.pid).not.toBe(process.pid);
    const events: EngineEvent[] = [];
    for await (const event of engine.generate({ prompt: "Hello", maxTokens: 5, ignoreEos: true, sampling: { temperature: 0 } })) events.push(event);
    expect(events.filter((e) => e.type === "token")).toHaveLength(5);
    expect(events.at(-1)).toMatchObject({ type: "done", finishReason: "length" });
    expect(await engine.tokenize("Hello world", { addSpecial: false })).toHaveLength(2);
  });

  test("breaking out of a stream cancels the request and frees its sequence", async () => {
    const engine = await manager.engine({ modelPath, parallel: 2, contextPerSequence: 256, threads: 2 });
    let seen = 0;
    for await (const event of engine.generate({ prompt: "Hello", maxTokens: 200, ignoreEos: true })) {
      if (event.type === "token" && ++seen === 2) break;
    }
    // The cancel reaches the child; the engine is idle again and serves the next request fully.
    const events: EngineEvent[] = [];
    for await (const event of engine.generate({ prompt: "Hello", maxTokens: 3, ignoreEos: true })) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: "done", finishReason: "length" });
    expect(engine.inFlight).toBe(0);
  });

  test("SIGKILL of the child fails in-flight requests, the parent stays up, and the next request reloads", async () => {
    const engine = await manager.engine({ modelPath, parallel: 2, contextPerSequence: 4096, threads: 2 });
    const firstPid = engine.pid;
    const events: EngineEvent[] = [];
    for await (const event of engine.generate({ prompt: "Hello", maxTokens: 100000, ignoreEos: true })) {
      events.push(event);
      if (events.length === 3) process.kill(firstPid, "SIGKILL");
    }
    const last = events.at(-1)!;
    expect(last.type).toBe("error");
    expect(last.type === "error" && last.code).toBe("engine_exited");
    expect(last.type === "error" && last.message).toContain("SIGKILL");

    const again = await manager.engine({ modelPath, parallel: 2, contextPerSequence: 4096, threads: 2 });
    expect(again.pid).not.toBe(firstPid);
    const next: EngineEvent[] = [];
    for await (const event of again.generate({ prompt: "Hello", maxTokens: 4, ignoreEos: true })) next.push(event);
    expect(next.at(-1)).toMatchObject({ type: "done", finishReason: "length" });
  });

  test("a model that cannot load gives a clear error naming the file", async () => {
    const bogus = join(import.meta.dir, "engine-process.test.ts");
    await expect(manager.engine({ modelPath: bogus })).rejects.toThrow(bogus);
  });
});

describe("engine children follow their parent", () => {
  test("a child whose parent is killed with SIGKILL exits by itself", async () => {
    const { host, facts } = startHost(await ensureModel("tiny-llama"));
    expect(await waitFor(() => facts.some((f) => f.generating), 60_000)).toBe(true);
    const childPid = facts.find((f) => f.childPid)!.childPid as number;
    expect(processAlive(childPid)).toBe(true);
    host.kill("SIGKILL");
    await host.exited;
    expect(await waitFor(() => !processAlive(childPid), 10_000)).toBe(true);
  });

  test("SIGTERM to the parent ends in-flight requests with an error and stops the child", async () => {
    const { host, facts } = startHost(await ensureModel("tiny-llama"));
    expect(await waitFor(() => facts.some((f) => f.generating), 60_000)).toBe(true);
    const childPid = facts.find((f) => f.childPid)!.childPid as number;
    host.kill("SIGTERM");
    expect(await host.exited).toBe(0);
    expect(facts).toContainEqual({ event: "error", code: "engine_exited" });
    expect(processAlive(childPid)).toBe(false);
  });
});
