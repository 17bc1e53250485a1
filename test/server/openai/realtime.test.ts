// OpenAI's Realtime API end to end: one HTTPS listener (a self-signed certificate: the openai package's
// realtime clients only speak wss:) with an API key, the tiny llama model with its audio projector as the
// model that hears and transcribes, the tiny Qwen3-TTS model as the voice, and the openai package's
// realtime clients. Speech from espeak-ng goes in as pcm16 chunks at real-time pace; events are checked
// for order and shape, and the audio out against /v1/audio/speech's samples for the same text.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Server } from "bun";
import OpenAI from "openai";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
import { OpenAIRealtimeWebSocket } from "openai/realtime/websocket";
import { ensureModel } from "../../../scripts/gen-models.ts";
import { ModelManager } from "../../../src/engine/model-manager.ts";
import { createApp } from "../../../src/server/app.ts";
import { listen } from "../../../src/server/listener.ts";
import { ModelService } from "../../../src/server/model-service.ts";
import { profiles } from "../../../src/server/profiles/index.ts";
import { serverOptions } from "../../../src/server/server-options.ts";
import { endpointWebSocket } from "../../../src/server/websocket-endpoints.ts";
import { loadRealtimeConfig } from "../../../src/server/realtime-config.ts";
import { speechSegments } from "../../../src/server/openai/realtime/speech-segments.ts";
import { decodeAudio, encodeAudio } from "../../../src/audio/realtime/audio-formats.ts";

const KEY = "sk-realtime-test";
const SPEECH = { seed: 7, temperature: 0.7, top_p: 0.9, top_k: 20 };
const SAMPLES_PER_FRAME = 1920;
const dir = mkdtempSync(join(tmpdir(), "llamux-realtime-"));
let server: Server<undefined>;
let manager: ModelManager;
let base: string;
let ca: string;

beforeAll(async () => {
  const [llama, audioProjector, tts, ttsProjector] = await Promise.all([
    ensureModel("tiny-llama"), ensureModel("tiny-audio-mmproj"), ensureModel("tiny-qwen3tts"), ensureModel("tiny-qwen3tts-mmproj"),
  ]);
  const made = Bun.spawnSync(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], { stderr: "pipe" });
  if (made.exitCode !== 0) throw new Error(`openssl failed: ${made.stderr.toString()}`);
  ca = readFileSync(join(dir, "cert.pem"), "utf8");
  const pipeline = { model: "tiny-audio", transcription_model: "tiny-audio", voice_model: "tiny-tts", instructions: "Answer briefly." };
  writeFileSync(join(dir, "realtime.json"), JSON.stringify({
    default: "assistant",
    presets: {
      assistant: { ...pipeline, speech: { ...SPEECH, max_frames: 4 } },
      "long-voice": { ...pipeline, speech: { ...SPEECH, max_frames: 4096 } },
    },
  }));
  manager = new ModelManager();
  const models = new ModelService(manager, [
    { path: llama, name: "tiny-audio", projectorPath: audioProjector },
    { path: tts, name: "tiny-tts", projectorPath: ttsProjector },
  ], { parallel: 2, contextPerSequence: 2048, threads: 2 });
  const profile = profiles.b;
  const app = createApp({ profile, models, realtime: loadRealtimeConfig(join(dir, "realtime.json")) }, serverOptions({ apiKeys: [KEY] }));
  server = listen({ fetch: app.fetch, profile, hostname: "127.0.0.1", port: 0, websocket: endpointWebSocket as never, tls: { cert: ca, key: readFileSync(join(dir, "key.pem"), "utf8") } });
  base = `https://127.0.0.1:${server.port}`;
}, 600_000);

afterAll(async () => {
  server?.stop(true);
  await manager?.stopAll();
});

type Event = { type: string; [key: string]: unknown };

/** A realtime client with every server event recorded, and a wait for the next event that matches. */
function connect(target: { model: string } | { intent: "transcription" }) {
  const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: KEY, maxRetries: 0 });
  const rt = new OpenAIRealtimeWS({ ...target, options: { ca } } as never, client);
  const events: Event[] = [];
  const waiters: Array<{ match: (e: Event) => boolean; resolve: (e: Event) => void }> = [];
  rt.on("event", (event) => {
    events.push(event as unknown as Event);
    for (const waiter of waiters.splice(0)) {
      if (waiter.match(event as unknown as Event)) waiter.resolve(event as unknown as Event);
      else waiters.push(waiter);
    }
  });
  rt.on("error", () => {}); // error events are read from `events`
  const waitFor = (type: string, match: (e: Event) => boolean = () => true, from = 0) => {
    const seen = events.slice(from).find((e) => e.type === type && match(e));
    if (seen) return Promise.resolve(seen);
    return new Promise<Event>((resolve) => waiters.push({ match: (e) => e.type === type && match(e), resolve }));
  };
  return { rt, events, waitFor, send: (event: Record<string, unknown>) => rt.send(event as never), close: () => rt.close() };
}

/** espeak-ng speaking `text`, then `silence` seconds, as pcm16 at 24 kHz. */
function spoken(text: string, silence = 1): Int16Array {
  const raw = Bun.spawnSync(["bash", "-c", `espeak-ng --stdout "${text}" | sox -t wav - -t raw -r 24000 -e signed -b 16 -c 1 - pad 0.3 ${silence}`]).stdout;
  return decodeAudio("pcm16", new Uint8Array(raw));
}

/** Appends the samples in 100 ms chunks at real-time pace. */
async function stream(client: ReturnType<typeof connect>, samples: Int16Array, format: "pcm16" | "g711_ulaw" = "pcm16"): Promise<void> {
  const chunk = 2400;
  for (let at = 0; at < samples.length; at += chunk) {
    const part = samples.subarray(at, at + chunk);
    const bytes = format === "pcm16" ? encodeAudio("pcm16", part) : encodeAudio("g711_ulaw", everyThird(part));
    client.send({ type: "input_audio_buffer.append", audio: Buffer.from(bytes).toString("base64") });
    await Bun.sleep(100);
  }
}
const everyThird = (samples: Int16Array) => samples.filter((_, i) => i % 3 === 0);

/** The samples /v1/audio/speech gives for the reply's transcript, piece by piece as the session speaks it. */
async function expectedSpeech(transcript: string, maxFrames: number): Promise<Int16Array> {
  const parts: Int16Array[] = [];
  let left = maxFrames;
  for (const piece of speechSegments(transcript)) {
    if (left <= 0) break;
    const response = await fetch(`${base}/v1/audio/speech`, {
      method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "tiny-tts", input: piece, response_format: "pcm", max_frames: left, ...SPEECH }), tls: { ca },
    } as RequestInit);
    expect(response.status).toBe(200);
    const pcm = decodeAudio("pcm16", new Uint8Array(await response.arrayBuffer()));
    left -= Math.ceil(pcm.length / SAMPLES_PER_FRAME);
    parts.push(pcm);
  }
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const typesFrom = (events: Event[], from: number) => events.slice(from).map((e) => e.type);
/** `types` appear in this order among `events` (others may come between). */
function expectInOrder(events: Event[], types: string[]): void {
  let at = 0;
  for (const event of events) if (event.type === types[at]) at++;
  expect(types.slice(at)).toEqual([]);
}

describe("GET /v1/realtime", () => {
  test("server_vad: a spoken turn is detected, committed, transcribed and answered in speech equal to /v1/audio/speech's samples", async () => {
    const client = connect({ model: "assistant" });
    const created = await client.waitFor("session.created");
    const session = created.session as Record<string, any>;
    expect(session.type).toBe("realtime");
    expect(session.model).toBe("assistant");
    expect(session.output_modalities).toEqual(["audio"]);
    expect(session.audio.input.format).toEqual({ type: "audio/pcm", rate: 24000 });
    expect(session.audio.input.turn_detection).toMatchObject({ type: "server_vad", threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 500 });
    expect(session.audio.input.transcription.model).toBe("tiny-audio");
    client.send({ type: "session.update", session: { type: "realtime", max_output_tokens: 24 } });
    await client.waitFor("session.updated");

    await stream(client, spoken("Hello there, what is the weather like today?"));
    const done = await client.waitFor("response.done");
    const transcribed = await client.waitFor("conversation.item.input_audio_transcription.completed");
    client.close();

    const types = client.events.map((e) => e.type);
    expectInOrder(client.events, [
      "input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped", "input_audio_buffer.committed",
      "conversation.item.added", "conversation.item.done",
      "response.created", "response.output_item.added", "conversation.item.added", "response.content_part.added",
      "response.output_audio_transcript.delta", "response.output_audio.delta",
      "response.output_audio.done", "response.output_audio_transcript.done", "response.content_part.done",
      "response.output_item.done", "conversation.item.done", "response.done",
    ]);
    expect(types.filter((t) => t === "error")).toEqual([]);
    const started = client.events.find((e) => e.type === "input_audio_buffer.speech_started")!;
    const stopped = client.events.find((e) => e.type === "input_audio_buffer.speech_stopped")!;
    const committed = client.events.find((e) => e.type === "input_audio_buffer.committed")!;
    expect(stopped.item_id).toBe(started.item_id);
    expect(committed.item_id).toBe(started.item_id);
    expect(stopped.audio_end_ms as number).toBeGreaterThan((started.audio_start_ms as number) + 1000);
    expect(transcribed.item_id).toBe(started.item_id);
    expect(typeof transcribed.transcript).toBe("string");
    expect((transcribed.usage as { type: string }).type).toBe("tokens");

    const response = done.response as Record<string, any>;
    // a random-weight model talks until max_output_tokens
    expect(response.status === "completed" || (response.status === "incomplete" && response.status_details.reason === "max_output_tokens")).toBe(true);
    expect(response.object).toBe("realtime.response");
    expect(response.output[0]).toMatchObject({ type: "message", role: "assistant", object: "realtime.item" });
    expect(response.usage.output_token_details.audio_tokens).toBe(4);
    expect(response.usage.input_tokens).toBeGreaterThan(0);
    const transcript = client.events.find((e) => e.type === "response.output_audio_transcript.done")!.transcript as string;
    const deltas = client.events.filter((e) => e.type === "response.output_audio_transcript.delta").map((e) => e.delta).join("");
    expect(deltas).toBe(transcript);
    const audio = Buffer.concat(client.events.filter((e) => e.type === "response.output_audio.delta").map((e) => Buffer.from(e.delta as string, "base64")));
    const expected = await expectedSpeech(transcript, 4);
    expect(expected.length).toBeGreaterThan(0);
    expect(audio.equals(Buffer.from(encodeAudio("pcm16", expected)))).toBe(true);
  }, 300_000);
});

describe("stopping a reply", () => {
  test("response.cancel stops the reply in its engines; speech over a reply cancels it (turn_detected) and truncates its item", async () => {
    const client = connect({ model: "long-voice" });
    await client.waitFor("session.created");
    client.send({ type: "session.update", session: { type: "realtime", max_output_tokens: 16, audio: { input: { turn_detection: { type: "server_vad", create_response: false } } } } });
    await client.waitFor("session.updated");
    client.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "Tell me a long story." }] } });
    client.send({ type: "response.create" });
    // the reply is in progress (its speech, up to 4,096 frames, follows its text)
    const first = await client.waitFor("response.output_audio_transcript.delta");
    client.send({ type: "response.cancel" });
    const cancelled = await client.waitFor("response.done", (e) => (e.response as { id: string }).id === first.response_id);
    const response = cancelled.response as Record<string, any>;
    expect(response.status).toBe("cancelled");
    expect(response.status_details).toEqual({ type: "cancelled", reason: "client_cancelled" });
    const doneAt = client.events.indexOf(cancelled);
    expect(typesFrom(client.events, doneAt + 1)).not.toContain("response.output_audio.delta");

    // the engines are free again: the next reply speaks, and speech over it stops it
    const from = client.events.length;
    client.send({ type: "response.create" });
    const second = await client.waitFor("response.output_audio_transcript.delta", () => true, from);
    await stream(client, spoken("Wait, stop please.", 0.8));
    const bargedIn = await client.waitFor("response.done", (e) => (e.response as { id: string }).id === second.response_id);
    expect((bargedIn.response as Record<string, any>).status).toBe("cancelled");
    expect((bargedIn.response as Record<string, any>).status_details.reason).toBe("turn_detected");
    expectInOrder(client.events.slice(from), ["response.created", "response.output_audio_transcript.delta", "input_audio_buffer.speech_started", "response.done", "input_audio_buffer.speech_stopped", "input_audio_buffer.committed"]);
    // an item whose audio had started playing is cut to what played
    const truncated = client.events.find((e) => e.type === "conversation.item.truncated");
    if (truncated) expect(truncated.item_id).toBe(second.item_id);
    client.close();
  }, 300_000);

  test("a client that leaves mid-reply stops the work: the next session's reply runs to its end", async () => {
    const leaving = connect({ model: "long-voice" });
    await leaving.waitFor("session.created");
    leaving.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "Talk for a long time." }] } });
    leaving.send({ type: "response.create", response: { max_output_tokens: 8 } });
    // the reply is being written: its speech (up to 4,096 frames, minutes on this model) is queued behind it
    await leaving.waitFor("response.output_audio_transcript.delta");
    leaving.close();
    const next = connect({ model: "assistant" });
    await next.waitFor("session.created");
    next.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "Hi." }] } });
    next.send({ type: "response.create", response: { max_output_tokens: 8 } });
    const done = await next.waitFor("response.done");
    expect(["completed", "incomplete"]).toContain((done.response as { status: string }).status);
    expect((done.response as Record<string, any>).usage.output_token_details.audio_tokens).toBe(4);
    next.close();
  }, 300_000);
});

describe("?intent=transcription", () => {
  test("G.711 μ-law speech is turned into transcription deltas and a transcript, and nothing else", async () => {
    const client = connect({ intent: "transcription" });
    const created = await client.waitFor("session.created");
    expect((created.session as { type: string }).type).toBe("transcription");
    client.send({ type: "session.update", session: { type: "transcription", audio: { input: { format: { type: "audio/pcmu" }, transcription: { model: "tiny-audio", language: "en" } } } } });
    const updated = await client.waitFor("session.updated");
    expect((updated.session as Record<string, any>).audio.input.format).toEqual({ type: "audio/pcmu" });
    await stream(client, spoken("Please write this down."), "g711_ulaw");
    const completed = await client.waitFor("conversation.item.input_audio_transcription.completed");
    const committed = client.events.find((e) => e.type === "input_audio_buffer.committed")!;
    expect(completed.item_id).toBe(committed.item_id);
    const deltas = client.events.filter((e) => e.type === "conversation.item.input_audio_transcription.delta").map((e) => e.delta).join("");
    expect(deltas.trim()).toBe(completed.transcript as string);
    expect(client.events.some((e) => e.type.startsWith("response."))).toBe(false);
    client.send({ type: "response.create" });
    const refused = await client.waitFor("error");
    expect((refused.error as { message: string }).message).toContain("makes no responses");
    client.close();
  }, 300_000);
});

describe("function tools", () => {
  test("a required function call streams its arguments; its function_call_output answers it and the next reply is text", async () => {
    const client = connect({ model: "assistant" });
    await client.waitFor("session.created");
    client.send({
      type: "session.update",
      session: {
        type: "realtime", output_modalities: ["text"], tool_choice: "required", audio: { input: { turn_detection: null } },
        tools: [{ type: "function", name: "get_weather", description: "The weather in a city", parameters: { type: "object", properties: { city: { type: "string", maxLength: 12 } }, required: ["city"] } }],
      },
    });
    const updated = await client.waitFor("session.updated");
    expect((updated.session as Record<string, any>).audio.input.turn_detection).toBeNull();
    client.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "Weather in Paris?" }] } });
    client.send({ type: "response.create" });
    const args = await client.waitFor("response.function_call_arguments.done");
    expect(args.name).toBe("get_weather");
    expect(typeof JSON.parse(args.arguments as string).city).toBe("string");
    const deltas = client.events.filter((e) => e.type === "response.function_call_arguments.delta");
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.every((d) => d.call_id === args.call_id)).toBe(true);
    const first = await client.waitFor("response.done");
    const call = (first.response as Record<string, any>).output[0];
    expect(call).toMatchObject({ type: "function_call", name: "get_weather", call_id: args.call_id, status: "completed" });

    const from = client.events.length;
    client.send({ type: "conversation.item.create", item: { type: "function_call_output", call_id: args.call_id, output: "{\"sky\": \"sunny\"}" } });
    client.send({ type: "response.create", response: { tool_choice: "none", max_output_tokens: 6 } });
    const second = await client.waitFor("response.done", () => true, from);
    expectInOrder(client.events.slice(from), ["conversation.item.added", "response.created", "response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.done"]);
    expect((second.response as Record<string, any>).output[0]).toMatchObject({ type: "message", role: "assistant" });
    client.close();
  }, 300_000);
});

describe("bad input", () => {
  test("garbage, unknown events and bad fields are answered with error events; the session goes on", async () => {
    const client = connect({ model: "assistant" });
    await client.waitFor("session.created");
    const errors = () => client.events.filter((e) => e.type === "error").map((e) => e.error as { code: string; message: string; param: string | null; event_id: string | null });
    (client.rt.socket as unknown as { send(text: string): void }).send("this is not JSON {");
    client.send({ type: "input_audio_buffer.explode", event_id: "evt_1" });
    client.send({ type: "input_audio_buffer.append", audio: "%%%not base64%%%" });
    client.send({ type: "input_audio_buffer.commit" });
    client.send({ type: "response.cancel" });
    client.send({ type: "session.update", session: { audio: { input: { turn_detection: { type: "server_vad", threshold: 7 } } } } });
    client.send({ type: "conversation.item.delete", item_id: "item_nope" });
    client.send({ type: "session.update", session: { type: "realtime", instructions: "Still here." } });
    const updated = await client.waitFor("session.updated");
    expect((updated.session as { instructions: string }).instructions).toBe("Still here.");
    const codes = errors().map((e) => e.code);
    expect(codes).toEqual(["invalid_json", "invalid_value", "invalid_value", "input_audio_buffer_commit_empty", "response_cancel_not_active", "invalid_value", "item_not_found"]);
    expect(errors()[1]!.event_id).toBe("evt_1");
    expect(errors()[5]!.param).toBe("session.audio.input.turn_detection.threshold");
    client.close();
  }, 60_000);

  test("the key: none is refused before the upgrade; the browsers' openai-insecure-api-key subprotocol is accepted", async () => {
    const refused = await fetch(`${base}/v1/realtime?model=assistant`, { headers: { upgrade: "websocket", connection: "upgrade", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": "13" }, tls: { ca } } as RequestInit);
    expect(refused.status).toBe(401);
    const previous = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
    try {
      const rt = new OpenAIRealtimeWebSocket({ model: "assistant" }, new OpenAI({ baseURL: `${base}/v1`, apiKey: KEY, dangerouslyAllowBrowser: true }));
      const created = await new Promise<Event>((resolve, reject) => {
        rt.on("session.created", (event) => resolve(event as unknown as Event));
        rt.on("error", reject);
      });
      expect((created.session as { type: string }).type).toBe("realtime");
      rt.close();
    } finally {
      if (previous === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = previous;
    }
  }, 60_000);
});
