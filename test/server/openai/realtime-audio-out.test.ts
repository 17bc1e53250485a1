// What a Realtime session sends, and how much of it may wait: replies in G.711 μ-law and A-law decode
// (with the alawmulaw package the codecs come from) to the pcm16 reply's samples at 8 kHz within the
// codec's error, and a client that stops reading has its session closed once the listener's bound of
// queued bytes is passed, instead of the server holding all it would send.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { alaw, mulaw } from "alawmulaw";
import { createResampler } from "../../../src/audio/realtime/resampler.ts";
import { pcm16FromFloat } from "../../../src/audio/realtime/audio-formats.ts";
import { SOCKET_BOUNDS } from "../../../src/server/websocket-endpoints.ts";
import { audioOf, connect, startRealtimeServer, type Client, type RealtimeServer } from "./realtime-fixture.ts";

let server: RealtimeServer;

beforeAll(async () => {
  server = await startRealtimeServer();
}, 600_000);

afterAll(async () => {
  await server?.stop();
});

const FORMATS = { pcm16: { type: "audio/pcm", rate: 24000 }, g711_ulaw: { type: "audio/pcmu" }, g711_alaw: { type: "audio/pcma" } } as const;

/** An out-of-band reply to the same words in `format`: its transcript and its audio bytes. */
async function replyIn(client: Client, format: keyof typeof FORMATS) {
  client.send({ type: "session.update", session: { type: "realtime", audio: { output: { format: FORMATS[format] } } } });
  await client.waitFor("session.updated", (e) => JSON.stringify((e.session as Record<string, any>).audio.output.format) === JSON.stringify(FORMATS[format]));
  const from = client.events.length;
  client.send({ type: "response.create", response: { conversation: "none", input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "Say something." }] }] } });
  const done = await client.waitFor("response.done", () => true, from);
  const events = client.events.slice(from, client.events.indexOf(done));
  const transcript = events.find((e) => e.type === "response.output_audio_transcript.done")!.transcript as string;
  const bytes = Buffer.concat(events.filter((e) => e.type === "response.output_audio.delta").map((e) => Buffer.from(e.delta as string, "base64")));
  expect((done.response as Record<string, any>).audio.output.format).toEqual(FORMATS[format]);
  return { transcript, bytes, events };
}

/** The largest error G.711 allows a sample: its step at that level (1/16 of the level, 16 near zero), and a little for resampling. */
const codecError = (sample: number) => Math.abs(sample) / 16 + 24;

describe("audio out", () => {
  test("G.711 μ-law and A-law replies decode to the pcm16 reply's samples at 8 kHz, within the codec's error", async () => {
    const client = connect(server, { model: "assistant" });
    await client.waitFor("session.created");
    client.send({ type: "session.update", session: { type: "realtime", temperature: 0, max_output_tokens: 12, audio: { input: { turn_detection: null } } } });
    await client.waitFor("session.updated");
    const pcm = await replyIn(client, "pcm16");
    const ulaw = await replyIn(client, "g711_ulaw");
    const alawReply = await replyIn(client, "g711_alaw");
    client.close();
    // greedy text: the three replies say the same words, so the speech model speaks the same samples
    expect(ulaw.transcript).toBe(pcm.transcript);
    expect(alawReply.transcript).toBe(pcm.transcript);

    const samples24k = audioOf(pcm.events, "pcm16");
    expect(samples24k.length).toBeGreaterThan(0);
    const resampler = await createResampler(24000, 8000);
    const floats = Float32Array.from(samples24k, (sample) => sample / 32768);
    const expected = pcm16FromFloat(joinFloats(resampler.push(floats), resampler.end()));
    expect(expected.some((sample) => Math.abs(sample) > 256)).toBe(true);
    for (const [name, decoded] of [["μ-law", mulaw.decode(new Uint8Array(ulaw.bytes))], ["A-law", alaw.decode(new Uint8Array(alawReply.bytes))]] as const) {
      expect({ name, samples: decoded.length }).toEqual({ name, samples: expected.length });
      const worst = decoded.reduce((most, sample, i) => Math.max(most, Math.abs(sample - expected[i]!) - codecError(expected[i]!)), -Infinity);
      expect({ name, beyondCodecError: Math.max(0, worst) }).toEqual({ name, beyondCodecError: 0 });
      // G.711 is one byte a sample
      expect(name === "μ-law" ? ulaw.bytes.length : alawReply.bytes.length).toBe(expected.length);
    }
  }, 300_000);

  test("a client that stops reading: once the bound of queued bytes is passed its session is closed, and what it reads afterwards is short of what it asked for", async () => {
    const client = connect(server, { model: "assistant" });
    await client.waitFor("session.created");
    const before = server.openSockets();
    // one item of a million characters: each retrieve answers with about a megabyte
    client.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "x".repeat(1_000_000) }] } });
    const added = await client.waitFor("conversation.item.done");
    const itemId = (added.item as { id: string }).id;
    let closed = false;
    client.rt.socket.on("close", () => {
      closed = true;
    });
    client.rt.socket.pause();
    const asked = Math.ceil((SOCKET_BOUNDS.backpressureBytes * 2.5) / 1_000_000);
    for (let i = 0; i < asked; i++) client.send({ type: "conversation.item.retrieve", item_id: itemId });
    // the server lets the session go: its socket is no longer open
    for (let tries = 0; server.openSockets() >= before && tries < 600; tries++) await Bun.sleep(100);
    expect(server.openSockets()).toBe(before - 1);
    client.rt.socket.resume();
    for (let tries = 0; !closed && tries < 600; tries++) await Bun.sleep(100);
    expect(closed).toBe(true);
    const retrieved = client.events.filter((e) => e.type === "conversation.item.retrieved").length;
    expect(retrieved).toBeLessThan(asked);

    // the server goes on: a new session answers
    const next = connect(server, { model: "assistant" });
    await next.waitFor("session.created");
    next.close();
  }, 300_000);
});

function joinFloats(a: Float32Array, b: Float32Array): Float32Array {
  const out = new Float32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
