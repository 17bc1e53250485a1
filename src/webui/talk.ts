// A spoken conversation from the page: the microphone goes to /v1/realtime (OpenAI's Realtime API, GA
// events) as pcm16 at 24 kHz, the server detects the turns (server_vad) and answers, and the reply's audio
// plays as it arrives. The AudioContext runs at 24 kHz, so the browser resamples the microphone to the
// API's rate and the reply to the speakers. A browser cannot set headers on a WebSocket: the key goes as
// the `openai-insecure-api-key.KEY` subprotocol beside `realtime`, as OpenAI's browser client sends it.
import { storedApiKey } from "./api.ts";

export const REALTIME_RATE = 24_000;
/** Samples per chunk sent: about 85 ms at 24 kHz. */
const CHUNK = 2048;

export interface TalkEvents {
  /** The server heard speech start (the reply playing stops: barge-in) or stop. */
  onSpeech(speaking: boolean): void;
  /** A committed turn of the user's; its transcript comes later when the session transcribes. */
  onUserTurn(itemId: string): void;
  onUserTranscript(itemId: string, text: string): void;
  /** Text of the reply `responseId`, as it streams (the spoken words, or the text of a text reply). */
  onReplyText(responseId: string, text: string): void;
  onReplyDone(responseId: string, status: string): void;
  /** Seconds of reply audio that have played to their end so far. */
  onPlayed(seconds: number): void;
  onError(message: string): void;
  onClosed(): void;
}

export interface TalkOptions {
  model: string;
  maxOutputTokens: number;
  temperature: number;
}

function base64Of(bytes: Uint8Array): string {
  let binary = "";
  for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  return btoa(binary);
}

function pcm16Of(samples: Float32Array): Uint8Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = Math.round(Math.max(-1, Math.min(1, samples[i]!)) * 0x7fff);
  return new Uint8Array(out.buffer);
}

function floatsOf(base64: string): Float32Array<ArrayBuffer> {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const samples = new Int16Array(bytes.buffer, 0, bytes.length >> 1);
  return Float32Array.from(samples, (s) => s / 0x8000);
}

function realtimeUrl(model: string): string {
  const url = new URL("/v1/realtime", location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  url.searchParams.set("model", model);
  return url.href;
}

/** One conversation: `start` must run within the click that asks for it (browsers start audio only then). */
export class Talk {
  private readonly context = new AudioContext({ sampleRate: REALTIME_RATE });
  private socket: WebSocket | undefined;
  private microphone: MediaStream | undefined;
  private processor: ScriptProcessorNode | undefined;
  private playing = new Set<AudioBufferSourceNode>();
  private playHead = 0;
  private played = 0;
  private readonly replies = new Map<string, string>();
  private stopped = false;

  constructor(private readonly events: TalkEvents) {}

  async start(options: TalkOptions): Promise<void> {
    await this.context.resume();
    const key = storedApiKey();
    const socket = new WebSocket(realtimeUrl(options.model), ["realtime", ...(key ? [`openai-insecure-api-key.${key}`] : [])]);
    this.socket = socket;
    socket.onmessage = (message) => this.received(JSON.parse(String(message.data)) as { type: string; [field: string]: unknown });
    socket.onclose = () => this.stop();
    await new Promise<void>((resolve, reject) => {
      socket.onopen = () => resolve();
      socket.onerror = () => reject(new Error("Cannot open /v1/realtime: the server refused the connection (is a key needed?)"));
    });
    socket.onerror = null;
    socket.send(JSON.stringify({
      type: "session.update",
      session: { type: "realtime", max_output_tokens: options.maxOutputTokens, temperature: options.temperature, audio: { input: { format: { type: "audio/pcm", rate: REALTIME_RATE } }, output: { format: { type: "audio/pcm", rate: REALTIME_RATE } } } },
    }));
    // the microphone opens once the socket is there, so that the first words are not lost
    this.microphone = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true } });
    if (this.stopped) return this.stop();
    const source = this.context.createMediaStreamSource(this.microphone);
    const processor = this.context.createScriptProcessor(CHUNK, 1, 1);
    processor.onaudioprocess = (event) => {
      if (socket.readyState !== WebSocket.OPEN) return;
      socket.send(JSON.stringify({ type: "input_audio_buffer.append", audio: base64Of(pcm16Of(event.inputBuffer.getChannelData(0))) }));
    };
    source.connect(processor);
    // a script processor runs only when connected on; its output is silence
    processor.connect(this.context.destination);
    this.processor = processor;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.processor?.disconnect();
    this.microphone?.getTracks().forEach((track) => track.stop());
    this.silence();
    if (this.socket && this.socket.readyState <= WebSocket.OPEN) this.socket.close();
    void this.context.close();
    this.events.onClosed();
  }

  private silence(): void {
    for (const source of this.playing) source.stop();
    this.playing.clear();
    this.playHead = 0;
  }

  private play(base64: string): void {
    const samples = floatsOf(base64);
    if (samples.length === 0) return;
    const buffer = this.context.createBuffer(1, samples.length, REALTIME_RATE);
    buffer.copyToChannel(samples, 0);
    const source = this.context.createBufferSource();
    source.buffer = buffer;
    source.connect(this.context.destination);
    const at = Math.max(this.context.currentTime, this.playHead);
    this.playHead = at + buffer.duration;
    this.playing.add(source);
    source.onended = () => {
      // a source stopped by barge-in did not play to its end
      if (!this.playing.delete(source)) return;
      this.played += buffer.duration;
      this.events.onPlayed(this.played);
    };
    source.start(at);
  }

  private replyText(responseId: string, delta: string): void {
    const text = (this.replies.get(responseId) ?? "") + delta;
    this.replies.set(responseId, text);
    this.events.onReplyText(responseId, text);
  }

  private received(event: { type: string; [field: string]: unknown }): void {
    switch (event.type) {
      case "input_audio_buffer.speech_started":
        this.silence();
        return this.events.onSpeech(true);
      case "input_audio_buffer.speech_stopped":
        return this.events.onSpeech(false);
      case "input_audio_buffer.committed":
        return this.events.onUserTurn(String(event.item_id));
      case "conversation.item.input_audio_transcription.completed":
        return this.events.onUserTranscript(String(event.item_id), String(event.transcript));
      case "response.output_audio.delta":
        return this.play(String(event.delta));
      case "response.output_audio_transcript.delta":
      case "response.output_text.delta":
        return this.replyText(String(event.response_id), String(event.delta));
      case "response.done": {
        const response = event.response as { id: string; status: string };
        return this.events.onReplyDone(response.id, response.status);
      }
      case "error":
        return this.events.onError((event.error as { message?: string }).message ?? "The server reported an error");
    }
  }
}
