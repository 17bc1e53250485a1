// The Realtime API's two interfaces: the GA one (the openai package's `openai/realtime/ws`) and the beta
// one that many clients still speak (its `openai/beta/realtime/ws`, which sends `OpenAI-Beta: realtime=v1`;
// a client that sends the beta's session shape; a beta transcription session). The same reply is written
// with each interface's event names and shapes, and never with the other's.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { encodeAudio } from "../../../src/audio/realtime/audio-formats.ts";
import { connect, connectRaw, expectedSpeech, expectInOrder, spoken, startRealtimeServer, stream, type Event, type RealtimeServer } from "./realtime-fixture.ts";

let server: RealtimeServer;

beforeAll(async () => {
  server = await startRealtimeServer();
}, 600_000);

afterAll(async () => {
  await server?.stop();
});

/** The names of one interface, and the other's that must never appear. */
const NAMES = {
  ga: {
    added: "conversation.item.added", audio: "response.output_audio.delta", audioDone: "response.output_audio.done",
    transcript: "response.output_audio_transcript.delta", transcriptDone: "response.output_audio_transcript.done",
    text: "response.output_text.delta", textDone: "response.output_text.done", audioPart: "output_audio", textPart: "output_text",
  },
  beta: {
    added: "conversation.item.created", audio: "response.audio.delta", audioDone: "response.audio.done",
    transcript: "response.audio_transcript.delta", transcriptDone: "response.audio_transcript.done",
    text: "response.text.delta", textDone: "response.text.done", audioPart: "audio", textPart: "text",
  },
};
const GA_ONLY = [...Object.values(NAMES.ga).filter((name) => name.includes(".")), "conversation.item.done"];
const BETA_ONLY = Object.values(NAMES.beta).filter((name) => name.includes(".") && !GA_ONLY.includes(name));

describe.each(["ga", "beta"] as const)("the %s interface", (kind) => {
  const names = NAMES[kind];
  const other = kind === "beta" ? GA_ONLY : BETA_ONLY;

  test("a spoken reply and a text reply, in this interface's names and shapes only; the audio is /v1/audio/speech's samples", async () => {
    const client = connect(server, { model: "assistant" }, { beta: kind === "beta" });
    const created = await client.waitFor("session.created");
    const session = created.session as Record<string, any>;
    if (kind === "beta") {
      expect(session).toMatchObject({ object: "realtime.session", model: "assistant", modalities: ["audio"], input_audio_format: "pcm16", output_audio_format: "pcm16", turn_detection: { type: "server_vad" } });
      expect(session.type).toBeUndefined();
      expect((await client.waitFor("conversation.created")).conversation).toMatchObject({ object: "realtime.conversation" });
      client.send({ type: "session.update", session: { turn_detection: null, max_response_output_tokens: 24 } });
    } else {
      expect(session).toMatchObject({ type: "realtime", output_modalities: ["audio"], audio: { output: { format: { type: "audio/pcm", rate: 24000 } } } });
      client.send({ type: "session.update", session: { type: "realtime", audio: { input: { turn_detection: null } }, max_output_tokens: 24 } });
    }
    const updated = await client.waitFor("session.updated");
    expect((updated.session as Record<string, unknown>)[kind === "beta" ? "turn_detection" : "audio"]).toBeDefined();

    client.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "Hello there." }] } });
    client.send({ type: "response.create" });
    const done = await client.waitFor("response.done");
    expectInOrder(client.events, [
      names.added, "response.created", "response.output_item.added", names.added, "response.content_part.added",
      names.transcript, names.audio, names.audioDone, names.transcriptDone, "response.content_part.done", "response.output_item.done", "response.done",
    ]);
    const response = done.response as Record<string, any>;
    expect(response.output[0].content[0].type).toBe(names.audioPart);
    if (kind === "beta") expect(response).toMatchObject({ modalities: ["audio"], output_audio_format: "pcm16" });
    else expect(response).toMatchObject({ output_modalities: ["audio"], audio: { output: { format: { type: "audio/pcm", rate: 24000 } } } });
    const transcript = client.events.find((e) => e.type === names.transcriptDone)!.transcript as string;
    const audio = Buffer.concat(client.events.filter((e) => e.type === names.audio).map((e) => Buffer.from(e.delta as string, "base64")));
    expect(audio.equals(Buffer.from(encodeAudio("pcm16", await expectedSpeech(server, transcript, 4))))).toBe(true);

    const from = client.events.length;
    client.send({ type: "response.create", response: { [kind === "beta" ? "modalities" : "output_modalities"]: ["text"], max_output_tokens: 6 } });
    const textDone = await client.waitFor("response.done", () => true, from);
    expectInOrder(client.events.slice(from), ["response.created", "response.output_item.added", names.text, names.textDone, "response.done"]);
    expect((textDone.response as Record<string, any>).output[0].content[0].type).toBe(names.textPart);
    client.close();

    const written = client.events.map((e: Event) => e.type);
    expect(written.filter((type) => other.includes(type))).toEqual([]);
    expect(written.filter((type) => type === "error")).toEqual([]);
  }, 300_000);
});

describe("asking for the beta interface without the header", () => {
  test("a session.update in the beta's shape turns the session's events to the beta's", async () => {
    const client = connect(server, { model: "assistant" });
    await client.waitFor("session.created");
    client.send({ type: "session.update", session: { modalities: ["text"], turn_detection: null, input_audio_format: "pcm16" } });
    const updated = await client.waitFor("session.updated");
    expect(updated.session).toMatchObject({ modalities: ["text"], turn_detection: null, input_audio_format: "pcm16" });
    client.send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: "Hi." }] } });
    client.send({ type: "response.create", response: { max_response_output_tokens: 6 } });
    await client.waitFor("response.done");
    expectInOrder(client.events, ["conversation.item.created", "response.created", "response.text.delta", "response.text.done", "response.done"]);
    expect(client.events.filter((e) => GA_ONLY.includes(e.type))).toEqual([]);
    client.close();
  }, 120_000);

  test("a beta transcription session (OpenAI-Beta header, ?intent=transcription): transcription_session.created and .updated, committed turns as conversation.item.created", async () => {
    const client = await connectRaw(server, "intent=transcription", { "OpenAI-Beta": "realtime=v1" });
    const created = await client.waitFor("transcription_session.created");
    expect(created.session).toMatchObject({ object: "realtime.transcription_session", input_audio_format: "pcm16" });
    client.send({ type: "transcription_session.update", session: { input_audio_transcription: { model: "tiny-audio", language: "en" } } });
    const updated = await client.waitFor("transcription_session.updated");
    expect(updated.session).toMatchObject({ input_audio_transcription: { model: "tiny-audio", language: "en" } });
    await stream(client, spoken("Please write this down."));
    const completed = await client.waitFor("conversation.item.input_audio_transcription.completed");
    const committed = client.events.find((e) => e.type === "input_audio_buffer.committed")!;
    expect(completed.item_id).toBe(committed.item_id);
    expectInOrder(client.events, ["transcription_session.created", "transcription_session.updated", "input_audio_buffer.speech_started", "input_audio_buffer.committed", "conversation.item.created", "conversation.item.input_audio_transcription.completed"]);
    expect(client.events.map((e) => e.type).filter((type) => type.startsWith("session.") || GA_ONLY.includes(type) || type === "conversation.created")).toEqual([]);
    client.close();
  }, 300_000);
});
