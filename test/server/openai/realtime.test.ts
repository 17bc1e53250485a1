// OpenAI's Realtime API end to end (realtime-fixture.ts: HTTPS with a key, the tiny llama model with its
// audio projector as the model that hears and transcribes, the tiny Qwen3-TTS model as the voice, the
// openai package's realtime clients). Speech from espeak-ng goes in as pcm16 chunks at real-time pace;
// events are checked for order and shape, and the audio out against /v1/audio/speech's samples for the
// same text. Stopping a reply is checked in the engines themselves: their stats stop moving.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { OpenAIRealtimeWebSocket } from "openai/realtime/websocket";
import { encodeAudio } from "../../../src/audio/realtime/audio-formats.ts";
import {
  audioOf, connect as connectTo, engineStats, expectedSpeech, expectInOrder, KEY, spoken, startRealtimeServer, stream, typesFrom,
  type Event, type RealtimeServer,
} from "./realtime-fixture.ts";

let server: RealtimeServer;

beforeAll(async () => {
  server = await startRealtimeServer();
}, 600_000);

afterAll(async () => {
  await server?.stop();
});

const connect = (target: { model: string } | { intent: "transcription" }) => connectTo(server, target);
const base = () => server.base;

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
    const expected = await expectedSpeech(server, transcript, 4);
    expect(expected.length).toBeGreaterThan(0);
    expect(audio.equals(Buffer.from(encodeAudio("pcm16", expected)))).toBe(true);
  }, 300_000);
});

/** Lets the engines run on a while (a step is milliseconds, a frame tens of them), for a check that nothing moved. */
const settle = () => Bun.sleep(1500);

describe("stopping a reply", () => {
  test("response.cancel mid-text: the chat's sequence has left its engine at the cancel's response.done, and no token is decoded after it", async () => {
    const client = connect({ model: "assistant" });
    await client.waitFor("session.created");
    client.send({ type: "session.update", session: { type: "realtime", output_modalities: ["text"], max_output_tokens: 1500, audio: { input: { turn_detection: null } } } });
    await client.waitFor("session.updated");
    client.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "Tell me a long story." }] } });
    client.send({ type: "response.create" });
    const first = await client.waitFor("response.output_text.delta");
    client.send({ type: "response.cancel" });
    const cancelled = await client.waitFor("response.done", (e) => (e.response as { id: string }).id === first.response_id);
    const atDone = await engineStats(server, server.chatPath);
    const response = cancelled.response as Record<string, any>;
    expect(response.status).toBe("cancelled");
    expect(response.status_details).toEqual({ type: "cancelled", reason: "client_cancelled" });
    expect(atDone.running).toBe(0);
    await settle();
    expect((await engineStats(server, server.chatPath)).decodedTokens).toBe(atDone.decodedTokens);
    const doneAt = client.events.indexOf(cancelled);
    expect(typesFrom(client.events, doneAt + 1)).not.toContain("response.output_text.delta");
    // what was written before the cancel is the item's text, well short of the 1,500 tokens asked for (a
    // cancel that did not reach the engine would be told only once the sequence had run to its end)
    const text = client.events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("");
    expect(response.output[0].content[0].text).toBe(text);
    expect(response.usage.output_tokens).toBeLessThan(1000);
    client.close();
  }, 300_000);

  test("response.cancel mid-speech, then speech over the next reply: no audio after either's response.done, the speech engine makes no frame after it, and the spoken item is cut to what played", async () => {
    const client = connect({ model: "long-voice" });
    await client.waitFor("session.created");
    // Greedy text, so that both replies say the same words and the speech model (seeded) speaks them alike:
    // the tiny model can draw its end code early for some texts (1 in 12 within 300 frames), and for these
    // words it speaks on far past the barge-in.
    client.send({ type: "session.update", session: { type: "realtime", temperature: 0, max_output_tokens: 16, audio: { input: { turn_detection: { type: "server_vad", create_response: false } } } } });
    await client.waitFor("session.updated");
    client.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "Tell me a long story." }] } });
    client.send({ type: "response.create" });
    // the speech (up to 4,096 frames) is under way: its first decode window has gone out
    const first = await client.waitFor("response.output_audio.delta");
    client.send({ type: "response.cancel" });
    const cancelled = await client.waitFor("response.done", (e) => (e.response as { id: string }).id === first.response_id);
    const framesAtCancel = await engineStats(server, server.speechPath);
    const response = cancelled.response as Record<string, any>;
    expect(response.status).toBe("cancelled");
    expect(response.status_details).toEqual({ type: "cancelled", reason: "client_cancelled" });
    expect(framesAtCancel.running).toBe(0);
    expect(framesAtCancel.speechFrames!).toBeLessThan(4096);

    // the engines are free again: the same reply again speaks, and speech over it stops it
    client.send({ type: "conversation.item.delete", item_id: first.item_id });
    await client.waitFor("conversation.item.deleted");
    const from = client.events.length;
    client.send({ type: "response.create" });
    const second = await client.waitFor("response.output_audio.delta", () => true, from);
    expect((await engineStats(server, server.speechPath)).speechFrames!).toBeGreaterThan(framesAtCancel.speechFrames!);
    expect(typesFrom(client.events, client.events.indexOf(cancelled) + 1).slice(0, from - client.events.indexOf(cancelled) - 1)).not.toContain("response.output_audio.delta");
    await stream(client, spoken("Wait, stop please.", 0.8));
    const bargedIn = await client.waitFor("response.done", (e) => (e.response as { id: string }).id === second.response_id);
    const framesAtBargeIn = await engineStats(server, server.speechPath);
    expect((bargedIn.response as Record<string, any>).status).toBe("cancelled");
    expect((bargedIn.response as Record<string, any>).status_details.reason).toBe("turn_detected");
    expect(framesAtBargeIn.running).toBe(0);
    expectInOrder(client.events.slice(from), ["response.created", "response.output_audio.delta", "input_audio_buffer.speech_started", "conversation.item.truncated", "response.done", "input_audio_buffer.speech_stopped", "input_audio_buffer.committed"]);
    const doneAt = client.events.indexOf(bargedIn);
    expect(typesFrom(client.events, doneAt + 1)).not.toContain("response.output_audio.delta");

    // the item keeps what had played when the speech started: less than the audio sent, and its transcript in proportion
    const sentMs = audioOf(client.events.slice(from, doneAt).filter((e) => e.item_id === second.item_id), "pcm16").length / 24;
    const truncated = client.events.find((e, i) => i >= from && e.type === "conversation.item.truncated")!;
    expect(truncated.item_id).toBe(second.item_id);
    expect(truncated.audio_end_ms as number).toBeGreaterThan(0);
    expect(truncated.audio_end_ms as number).toBeLessThan(sentMs);
    const transcript = client.events.filter((e, i) => i >= from && e.type === "response.output_audio_transcript.delta").map((e) => e.delta).join("");
    client.send({ type: "conversation.item.retrieve", item_id: second.item_id });
    const retrieved = await client.waitFor("conversation.item.retrieved");
    const kept = (retrieved.item as Record<string, any>).content[0].transcript as string;
    expect(transcript.startsWith(kept)).toBe(true);
    expect(kept.length).toBeLessThanOrEqual(Math.ceil((transcript.length * (truncated.audio_end_ms as number)) / sentMs));

    await settle();
    expect((await engineStats(server, server.speechPath)).speechFrames).toBe(framesAtBargeIn.speechFrames);
    client.close();
  }, 300_000);

  test("a client that leaves mid-speech stops the work: the speech engine stops making frames, and the next session's reply runs to its end", async () => {
    const leaving = connect({ model: "long-voice" });
    await leaving.waitFor("session.created");
    leaving.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "Talk for a long time." }] } });
    leaving.send({ type: "response.create", response: { max_output_tokens: 8 } });
    await leaving.waitFor("response.output_audio.delta");
    leaving.close();
    // the speech (up to 4,096 frames) stops: the engine's frame count comes to rest well short of it
    let stats = await engineStats(server, server.speechPath);
    for (let tries = 0; stats.running > 0 && tries < 100; tries++) {
      await Bun.sleep(100);
      stats = await engineStats(server, server.speechPath);
    }
    expect(stats.running).toBe(0);
    await settle();
    expect((await engineStats(server, server.speechPath)).speechFrames).toBe(stats.speechFrames);

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
    client.rt.socket.send("this is not JSON {");
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
    const refused = await fetch(`${base()}/v1/realtime?model=assistant`, { headers: { upgrade: "websocket", connection: "upgrade", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": "13" }, tls: { ca: server.ca } } as RequestInit);
    expect(refused.status).toBe(401);
    const previous = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
    try {
      const rt = new OpenAIRealtimeWebSocket({ model: "assistant" }, new OpenAI({ baseURL: `${base()}/v1`, apiKey: KEY, dangerouslyAllowBrowser: true }));
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
