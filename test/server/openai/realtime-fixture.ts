// What the Realtime API's tests share: one HTTPS listener (a self-signed certificate: the openai package's
// realtime clients only speak wss:) with an API key, the tiny llama model with its audio projector as the
// model that hears and transcribes, the tiny Qwen3-TTS model as the voice, a --realtime-config with a
// short-voiced and a long-voiced preset, and the openai package's realtime clients (GA, or beta with its
// `OpenAI-Beta: realtime=v1` header) with every server event recorded.
//
// The engines run one thread each. ggml's threads meet at a spinning barrier after every operation, so on
// a machine whose cores are busy with other work two threads wait for each other at every node: the tiny
// Qwen3-TTS model then took 1 to 7 seconds a frame (its first 72-frame window of audio came after minutes)
// where one thread takes about 25 ms (measured on a 2-core machine at load 13).
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Server } from "bun";
import { expect } from "bun:test";
import OpenAI from "openai";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
import { OpenAIRealtimeWS as OpenAIRealtimeBetaWS } from "openai/beta/realtime/ws";
import { ensureModel } from "../../../scripts/gen-models.ts";
import { ModelManager } from "../../../src/engine/model-manager.ts";
import type { EngineStats } from "../../../src/engine/types.ts";
import type { McpHub } from "../../../src/mcp/mcp-hub.ts";
import { createApp } from "../../../src/server/app.ts";
import { listen } from "../../../src/server/listener.ts";
import { ModelService } from "../../../src/server/model-service.ts";
import { profiles } from "../../../src/server/profiles/index.ts";
import { serverOptions } from "../../../src/server/server-options.ts";
import { endpointWebSocket } from "../../../src/server/websocket-endpoints.ts";
import { loadRealtimeConfig } from "../../../src/server/realtime-config.ts";
import { speechSegments } from "../../../src/server/openai/realtime/speech-segments.ts";
import { decodeAudio, encodeAudio, type RealtimeAudioFormat } from "../../../src/audio/realtime/audio-formats.ts";

export const KEY = "sk-realtime-test";
export const SPEECH = { seed: 7, temperature: 0.7, top_p: 0.9, top_k: 20 };
export const SAMPLES_PER_FRAME = 1920;
/** Frames of the speech model's first decode window: its first audio comes after them (speech-runner.ts). */
export const FIRST_WINDOW_FRAMES = 72;

export interface RealtimeServer {
  base: string;
  ca: string;
  manager: ModelManager;
  /** The GGUF files of the chat (hearing) model and of the speech model. */
  chatPath: string;
  speechPath: string;
  /** WebSockets the listener holds open now. */
  openSockets(): number;
  stop(): Promise<void>;
}

export async function startRealtimeServer(options: { mcp?: McpHub } = {}): Promise<RealtimeServer> {
  const [llama, audioProjector, tts, ttsProjector] = await Promise.all([
    ensureModel("tiny-llama"), ensureModel("tiny-audio-mmproj"), ensureModel("tiny-qwen3tts"), ensureModel("tiny-qwen3tts-mmproj"),
  ]);
  const dir = mkdtempSync(join(tmpdir(), "llamux-realtime-"));
  const made = Bun.spawnSync(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], { stderr: "pipe" });
  if (made.exitCode !== 0) throw new Error(`openssl failed: ${made.stderr.toString()}`);
  const ca = readFileSync(join(dir, "cert.pem"), "utf8");
  const pipeline = { model: "tiny-audio", transcription_model: "tiny-audio", voice_model: "tiny-tts", instructions: "Answer briefly." };
  writeFileSync(join(dir, "realtime.json"), JSON.stringify({
    default: "assistant",
    presets: {
      assistant: { ...pipeline, speech: { ...SPEECH, max_frames: 4 } },
      "long-voice": { ...pipeline, speech: { ...SPEECH, max_frames: 4096 } },
    },
  }));
  const manager = new ModelManager();
  const models = new ModelService(manager, [
    { path: llama, name: "tiny-audio", projectorPath: audioProjector },
    { path: tts, name: "tiny-tts", projectorPath: ttsProjector },
  ], { parallel: 2, contextPerSequence: 2048, threads: 1 });
  const profile = profiles.b;
  const app = createApp({ profile, models, realtime: loadRealtimeConfig(join(dir, "realtime.json")), ...(options.mcp ? { mcp: options.mcp } : {}) }, serverOptions({ apiKeys: [KEY] }));
  const server: Server<undefined> = listen({ fetch: app.fetch, profile, hostname: "127.0.0.1", port: 0, websocket: endpointWebSocket as never, tls: { cert: ca, key: readFileSync(join(dir, "key.pem"), "utf8") } });
  return {
    base: `https://127.0.0.1:${server.port}`, ca, manager, chatPath: llama, speechPath: tts,
    openSockets: () => server.pendingWebSockets,
    async stop() {
      server.stop(true);
      await manager.stopAll();
    },
  };
}

/** The stats of the engine running the model at `path` (it must be loaded). */
export async function engineStats(server: RealtimeServer, path: string): Promise<EngineStats> {
  const engine = (await server.manager.loaded()).find((loaded) => loaded.options.modelPath === path);
  if (!engine) throw new Error(`no engine runs ${path}`);
  return engine.stats();
}

export type Event = { type: string; [key: string]: unknown };
/** What the GA and the beta clients have in common. */
interface RealtimeClient {
  on(event: string, listener: (event: unknown) => void): unknown;
  send(event: unknown): void;
  close(): void;
  /** The `ws` socket under the client (the beta browser client's is a browser WebSocket). */
  socket: { send(data: string): void; readyState: number; on(event: string, listener: (...args: unknown[]) => void): void; pause(): void; resume(): void };
}
export type Client = ReturnType<typeof connect>;

/** A realtime client with every server event recorded, and a wait for the next event that matches; `beta`: the beta client. */
export function connect(server: RealtimeServer, target: { model: string } | { intent: "transcription" }, { beta = false } = {}) {
  const client = new OpenAI({ baseURL: `${server.base}/v1`, apiKey: KEY, maxRetries: 0 });
  const rt = (beta
    ? new OpenAIRealtimeBetaWS({ ...target, options: { ca: server.ca } } as never, client)
    : new OpenAIRealtimeWS({ ...target, options: { ca: server.ca } } as never, client)) as unknown as RealtimeClient;
  const events: Event[] = [];
  const waiters: Waiter[] = [];
  rt.on("event", (event: unknown) => {
    events.push(event as Event);
    for (const waiter of waiters.splice(0)) {
      if (waiter.match(event as Event)) waiter.resolve(event as Event);
      else waiters.push(waiter);
    }
  });
  rt.on("error", () => {}); // error events are read from `events`
  return { rt, ...recorded(events, waiters), send: (event: Record<string, unknown>) => rt.send(event), close: () => rt.close() };
}

type Waiter = { match: (e: Event) => boolean; resolve: (e: Event) => void };

/** A wait for the next event of `type` that matches, among those recorded from index `from` on. */
function recorded(events: Event[], waiters: Waiter[]) {
  const waitFor = (type: string, match: (e: Event) => boolean = () => true, from = 0) => {
    const seen = events.slice(from).find((e) => e.type === type && match(e));
    if (seen) return Promise.resolve(seen);
    return new Promise<Event>((resolve) => waiters.push({ match: (e) => e.type === type && match(e), resolve }));
  };
  return { events, waitFor };
}

/** A plain WebSocket to /v1/realtime with `query` and `headers` (Bun's client sends headers, as server-side clients do). */
export async function connectRaw(server: RealtimeServer, query: string, headers: Record<string, string>) {
  const socket = new WebSocket(`${server.base.replace("https", "wss")}/v1/realtime?${query}`, { headers: { authorization: `Bearer ${KEY}`, ...headers }, tls: { ca: server.ca } } as never);
  const events: Event[] = [];
  const waiters: Waiter[] = [];
  socket.addEventListener("message", (message) => {
    const event = JSON.parse(String(message.data)) as Event;
    events.push(event);
    for (const waiter of waiters.splice(0)) {
      if (waiter.match(event)) waiter.resolve(event);
      else waiters.push(waiter);
    }
  });
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve, { once: true });
    socket.addEventListener("error", reject, { once: true });
  });
  return { ...recorded(events, waiters), send: (event: Record<string, unknown>) => socket.send(JSON.stringify(event)), close: () => socket.close() };
}

/** espeak-ng speaking `text`, then `silence` seconds, as pcm16 at 24 kHz. */
export function spoken(text: string, silence = 1): Int16Array {
  const raw = Bun.spawnSync(["bash", "-c", `espeak-ng --stdout "${text}" | sox -t wav - -t raw -r 24000 -e signed -b 16 -c 1 - pad 0.3 ${silence}`]).stdout;
  return decodeAudio("pcm16", new Uint8Array(raw));
}

const everyThird = (samples: Int16Array) => samples.filter((_, i) => i % 3 === 0);

/** Appends the samples in 100 ms chunks at real-time pace. */
export async function stream(client: Pick<Client, "send">, samples: Int16Array, format: "pcm16" | "g711_ulaw" = "pcm16"): Promise<void> {
  const chunk = 2400;
  for (let at = 0; at < samples.length; at += chunk) {
    const part = samples.subarray(at, at + chunk);
    const bytes = format === "pcm16" ? encodeAudio("pcm16", part) : encodeAudio("g711_ulaw", everyThird(part));
    client.send({ type: "input_audio_buffer.append", audio: Buffer.from(bytes).toString("base64") });
    await Bun.sleep(100);
  }
}

/** The samples /v1/audio/speech gives for the reply's transcript, piece by piece as the session speaks it. */
export async function expectedSpeech(server: RealtimeServer, transcript: string, maxFrames: number): Promise<Int16Array> {
  const parts: Int16Array[] = [];
  let left = maxFrames;
  for (const piece of speechSegments(transcript)) {
    if (left <= 0) break;
    const response = await fetch(`${server.base}/v1/audio/speech`, {
      method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "tiny-tts", input: piece, response_format: "pcm", max_frames: left, ...SPEECH }), tls: { ca: server.ca },
    } as RequestInit);
    expect(response.status).toBe(200);
    const pcm = decodeAudio("pcm16", new Uint8Array(await response.arrayBuffer()));
    left -= Math.ceil(pcm.length / SAMPLES_PER_FRAME);
    parts.push(pcm);
  }
  return joinSamples(parts);
}

export function joinSamples(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The audio of every `type` delta event among `events`, decoded from `format`. */
export function audioOf(events: Event[], format: RealtimeAudioFormat, type = "response.output_audio.delta"): Int16Array {
  return joinSamples(events.filter((e) => e.type === type).map((e) => decodeAudio(format, new Uint8Array(Buffer.from(e.delta as string, "base64")))));
}

export const typesFrom = (events: Event[], from: number) => events.slice(from).map((e) => e.type);

/** `types` appear in this order among `events` (others may come between). */
export function expectInOrder(events: Event[], types: string[]): void {
  let at = 0;
  for (const event of events) if (event.type === types[at]) at++;
  expect(types.slice(at)).toEqual([]);
}
