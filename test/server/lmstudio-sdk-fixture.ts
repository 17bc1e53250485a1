// Shared set-up of the LM Studio SDK tests: a store with a chat model and an embedding model pulled from
// the local hub fixture, a raw socket client of LM Studio's protocol, and a quiet SDK logger.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { ModelStore } from "../../src/store/model-store.ts";
import { pullModel } from "../../src/store/pull.ts";
import { type HubServer, startHubServer } from "../fixtures/hub-server.ts";

export const CHAT_KEY = "llamux-test/Tiny-Chat-GGUF";
export const BERT_KEY = "llamux-test/Tiny-Bert-GGUF";

export interface SdkStore {
  dir: string;
  storeDir: string;
  hub: HubServer;
}

/** A fresh store holding the tiny chat model (ChatML/Hermes tools) and the tiny BERT embedding model. */
export async function sdkStore(): Promise<SdkStore> {
  const dir = mkdtempSync(join(tmpdir(), "llamux-lmstudio-sdk-"));
  const gguf = async (name: Parameters<typeof ensureModel>[0]) => new Uint8Array(readFileSync(await ensureModel(name)));
  const hub = await startHubServer({
    [CHAT_KEY]: { files: [{ path: "tiny-chat-Q4_K_M.gguf", content: await gguf("tiny-llama") }] },
    [BERT_KEY]: { files: [{ path: "tiny-bert-F16.gguf", content: await gguf("tiny-bert") }] },
  });
  const storeDir = join(dir, "store");
  const store = new ModelStore(storeDir);
  for (const repo of [CHAT_KEY, BERT_KEY]) await pullModel(store, `hf.co/${repo}`, { hub: { endpoint: hub.url } });
  return { dir, storeDir, hub };
}

/** The SDK logs protocol warnings to the console; tests read errors from the calls instead. */
export const quietLogger = { debug() {}, info() {}, warn() {}, error() {} };

type Frame = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A WebSocket of LM Studio's protocol without the SDK, for frames the SDK would never send. */
export class RawSocket {
  private readonly frames: Frame[] = [];
  private waiters: Array<() => void> = [];
  closed: { code: number; reason: string } | undefined;

  private constructor(readonly ws: WebSocket) {
    ws.addEventListener("message", (event) => {
      this.frames.push(JSON.parse(String(event.data)) as Frame);
      this.wake();
    });
    ws.addEventListener("close", (event) => {
      this.closed = { code: event.code, reason: event.reason };
      this.wake();
    });
  }

  static async open(url: string): Promise<RawSocket> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener("open", () => resolve(), { once: true });
      ws.addEventListener("error", () => reject(new Error(`Cannot open ${url}`)), { once: true });
    });
    return new RawSocket(ws);
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  }

  /** The next frame that `match` accepts (frames before it are dropped), within `ms`. */
  async next(match: (frame: Frame) => boolean = () => true, ms = 10_000): Promise<Frame> {
    const deadline = Date.now() + ms;
    for (;;) {
      const index = this.frames.findIndex(match);
      if (index >= 0) return this.frames.splice(0, index + 1).at(-1)!;
      if (this.closed) throw new Error(`Socket closed (${this.closed.code} ${this.closed.reason}) before the expected frame`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`No matching frame within ${ms} ms; got ${JSON.stringify(this.frames).slice(0, 500)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => (clearTimeout(timer), resolve()));
      });
    }
  }

  /** Waits for the socket to close, within `ms`. */
  async closing(ms = 5000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + ms;
    while (!this.closed && Date.now() < deadline) await Bun.sleep(20);
    if (!this.closed) throw new Error(`Socket still open after ${ms} ms`);
    return this.closed;
  }

  close(): void {
    this.ws.close();
  }
}

/** Resolves whether 127.0.0.1:port can be bound now (nothing else listens there). */
export async function portIsFree(port: number): Promise<boolean> {
  try {
    const probe = Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } });
    probe.stop(true);
    return true;
  } catch {
    return false;
  }
}
