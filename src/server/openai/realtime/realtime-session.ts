// One Realtime WebSocket session: client events in, server events out, in OpenAI's order. It holds the
// session's settings, its conversation, the input audio buffer with its turn detection, the one reply in
// progress, the transcriptions of committed audio and the MCP servers its tools name. Frames are handled one at a time, in order; a frame
// that is not a valid client event gets an `error` event and changes nothing. Closing the socket stops
// every piece of work the session started. Events are written in the GA interface's names and shapes, or
// the beta's for a client that asks for it (beta-wire.ts).
import { decodeAudio, FORMAT_SAMPLE_RATES } from "../../../audio/realtime/audio-formats.ts";
import { TurnDetector, type TurnEvent } from "../../../audio/realtime/turn-detector.ts";
import { createVoiceActivity, type VoiceActivity } from "../../../audio/realtime/voice-activity.ts";
import { toApiError } from "../../api-error.ts";
import type { ServerDeps } from "../../deps.ts";
import { logger } from "../../../log.ts";
import type { KeyRequest } from "../../../keys/key-request.ts";
import { betaEvent, isBetaSession } from "./beta-wire.ts";
import { ClientEventError, parseClientEvent, type ClientEvent, type ClientItem } from "./client-events.ts";
import { Conversation, itemWire, newItemId, type ContentPart, type Item } from "./conversation.ts";
import { InputAudioBuffer, MIN_COMMIT_MS, wavOf } from "./input-buffer.ts";
import { transcribe } from "./input-transcription.ts";
import { mcpRequestsOf, SessionMcp } from "./realtime-mcp.ts";
import { RealtimeReply, type SpokenItem } from "./reply-run.ts";
import { initialSession, updatedSession, type SessionConfig } from "./session-config.ts";
import type { RealtimeSettings } from "../../realtime-config.ts";
import { sessionWire } from "./session-wire.ts";

const log = logger("realtime");

export interface SocketLink {
  send(text: string): void;
  close(code: number, reason: string): void;
}

/** A session with no client event and no reply in progress for this long is closed. */
export const SESSION_IDLE_SECONDS = 600;
/** Most base64 characters of audio one append may carry (OpenAI's 15 MiB). */
const MAX_APPEND_BASE64 = 15 * 1024 * 1024;

export class RealtimeSession {
  private config: SessionConfig;
  private readonly conversation = new Conversation();
  private buffer: InputAudioBuffer;
  private vad: { activity: VoiceActivity; detector: TurnDetector; originMs: number } | undefined;
  /** The item id a detected turn's audio will take, from speech_started to its commit. */
  private turn: { itemId: string; startMs: number } | undefined;
  private reply: RealtimeReply | undefined;
  private lastSpoken: SpokenItem | undefined;
  private readonly work = new AbortController();
  private readonly mcp: SessionMcp;
  private queue: Promise<void> = Promise.resolve();
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;

  /** `key`: the key the socket was opened with; the session's replies and MCP servers run as its work. */
  constructor(
    private readonly deps: ServerDeps, private readonly settings: RealtimeSettings | undefined, private readonly link: SocketLink,
    kind: SessionConfig["kind"], model: string | undefined, private readonly key?: KeyRequest, private beta = false,
  ) {
    this.config = initialSession(kind, `sess_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`, model, settings);
    this.buffer = new InputAudioBuffer(FORMAT_SAMPLE_RATES[this.config.inputFormat]);
    this.mcp = new SessionMcp(deps, key, this.conversation, (type, fields) => this.emit(type, fields), this.work.signal);
  }

  opened(): void {
    this.emit("session.created", { session: sessionWire(this.config) });
    if (this.beta && this.config.kind === "realtime") this.emit("conversation.created", { conversation: { id: `conv_${this.config.id.slice(5)}`, object: "realtime.conversation" } });
    this.touch();
  }

  received(frame: string): void {
    this.touch();
    this.queue = this.queue.then(() => this.handle(frame));
  }

  ended(): void {
    this.closed = true;
    clearTimeout(this.idleTimer);
    this.work.abort();
    this.reply?.cancel("client_cancelled");
    this.mcp.close();
    this.vad?.activity.close();
  }

  private emit(type: string, fields: Record<string, unknown>): void {
    if (this.closed) return;
    const event = this.beta ? betaEvent(type, fields, this.config) : { type, fields };
    if (!event) return;
    this.link.send(JSON.stringify({ type: event.type, event_id: `event_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`, ...event.fields }));
  }

  private error(error: unknown, clientEventId: string | null): void {
    if (error instanceof ClientEventError) {
      this.emit("error", { error: { type: "invalid_request_error", code: error.code, message: error.message, param: error.param, event_id: error.eventId ?? clientEventId } });
      return;
    }
    const apiError = toApiError(error);
    if (apiError.status >= 500) log.error(`a realtime event failed: ${apiError.message}`);
    this.emit("error", { error: { type: apiError.status >= 500 ? "server_error" : "invalid_request_error", code: apiError.code, message: apiError.message, param: apiError.param, event_id: clientEventId } });
  }

  private touch(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.reply?.active) return this.touch();
      this.emit("error", { error: { type: "invalid_request_error", code: "session_idle", message: `The session sent nothing for ${SESSION_IDLE_SECONDS} seconds and is closed`, param: null, event_id: null } });
      this.link.close(1000, "idle");
    }, SESSION_IDLE_SECONDS * 1000);
    this.idleTimer.unref?.();
  }

  private async handle(frame: string): Promise<void> {
    if (this.closed) return;
    let event: ClientEvent | undefined;
    try {
      event = parseClientEvent(frame);
      await this.dispatch(event);
    } catch (error) {
      this.error(error, event?.event_id ?? null);
    }
  }

  private async dispatch(event: ClientEvent): Promise<void> {
    switch (event.type) {
      case "session.update":
        return this.updateSession(event.session);
      case "transcription_session.update":
        // the beta's event for a transcription session
        this.beta = true;
        return this.updateSession(event.session);
      case "input_audio_buffer.append":
        return this.append(event.audio);
      case "input_audio_buffer.commit":
        if (this.buffer.durationMs < MIN_COMMIT_MS) {
          throw new ClientEventError(`Error committing input audio buffer: buffer too small. Expected at least ${MIN_COMMIT_MS}ms of audio, but buffer only has ${this.buffer.durationMs.toFixed(2)}ms of audio.`, null, "input_audio_buffer_commit_empty");
        }
        this.commit(this.turn?.itemId ?? newItemId(), this.buffer.bufferStartMs, this.buffer.nowMs, false);
        return;
      case "input_audio_buffer.clear":
        this.buffer.clear();
        this.turn = undefined;
        this.emit("input_audio_buffer.cleared", {});
        return;
      case "conversation.item.create":
        return this.createItem(event.item, event.previous_item_id);
      case "conversation.item.delete":
        this.conversation.delete(event.item_id);
        this.emit("conversation.item.deleted", { item_id: event.item_id });
        return;
      case "conversation.item.retrieve": {
        const item = this.conversation.find(event.item_id);
        if (!item) throw new ClientEventError(`Error retrieving item: the item with id '${event.item_id}' does not exist`, "item_id", "item_not_found");
        this.emit("conversation.item.retrieved", { item: itemWire(item) });
        return;
      }
      case "conversation.item.truncate":
        return this.truncate(event.item_id, event.content_index, event.audio_end_ms);
      case "response.create":
        return this.createResponse(event.response ?? {}, event.response?.input);
      case "response.cancel": {
        const reply = this.reply;
        if (!reply?.active || (event.response_id !== undefined && event.response_id !== reply.id)) {
          throw new ClientEventError(event.response_id ? `Cannot cancel response '${event.response_id}': it is not in progress` : "Cancellation failed: no active response found", "response_id", "response_cancel_not_active");
        }
        reply.cancel("client_cancelled");
        await reply.finished;
        return;
      }
    }
  }

  private async updateSession(update: Record<string, unknown>): Promise<void> {
    const next = updatedSession(this.config, update, this.settings);
    // a client that sends the beta's session shape reads the beta's events from now on
    if (isBetaSession(update)) this.beta = true;
    // MCP entries are checked before anything changes; their servers are listed once the update is told
    const mcpChanged = JSON.stringify(next.mcpTools) !== JSON.stringify(this.config.mcpTools);
    const mcpRequests = mcpChanged ? mcpRequestsOf(this.deps, Array.isArray(update.tools) ? update.tools : [], "session.") : undefined;
    if (mcpRequests?.length) this.key?.requireScope("mcp", "use MCP servers (tools the server runs)");
    if (next.inputFormat !== this.config.inputFormat) {
      this.buffer = new InputAudioBuffer(FORMAT_SAMPLE_RATES[next.inputFormat]);
      this.turn = undefined;
    }
    const turnChanged = JSON.stringify(next.turnDetection) !== JSON.stringify(this.config.turnDetection) || next.inputFormat !== this.config.inputFormat;
    this.config = next;
    if (turnChanged) {
      this.vad?.activity.close();
      this.vad = next.turnDetection
        ? { activity: await createVoiceActivity(FORMAT_SAMPLE_RATES[next.inputFormat]), detector: new TurnDetector(next.turnDetection), originMs: this.buffer.nowMs }
        : undefined;
    }
    this.emit("session.updated", { session: sessionWire(this.config) });
    if (mcpRequests) this.mcp.set(mcpRequests, next.tools.map((tool) => tool.name));
  }

  private async append(base64: string): Promise<void> {
    if (base64.length > MAX_APPEND_BASE64) throw new ClientEventError(`One append carries at most ${MAX_APPEND_BASE64} characters of base64 audio`, "audio", "input_audio_buffer_append_too_large");
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64) || base64.length % 4 === 1) throw new ClientEventError("The audio is not valid base64", "audio", "invalid_value");
    let samples: Int16Array;
    try {
      samples = decodeAudio(this.config.inputFormat, new Uint8Array(Buffer.from(base64, "base64")));
    } catch (error) {
      throw new ClientEventError(`Cannot read the audio: ${(error as Error).message}`, "audio", "invalid_value");
    }
    this.buffer.append(samples);
    if (this.config.turnDetection && !this.vad) {
      this.vad = { activity: await createVoiceActivity(this.buffer.rate), detector: new TurnDetector(this.config.turnDetection), originMs: this.buffer.nowMs - this.buffer.durationMs };
    }
    if (!this.vad) return;
    for (const turn of this.vad.detector.push(this.vad.activity.push(samples))) this.onTurn(turn, this.vad.originMs);
    // Between turns only the padding a next turn may need is kept.
    if (!this.vad.detector.inSpeech && !this.turn) this.buffer.dropBefore(this.buffer.nowMs - this.config.turnDetection!.prefixPaddingMs - 500);
  }

  private onTurn(turn: TurnEvent, originMs: number): void {
    const settings = this.config.turnDetection!;
    if (turn.type === "speech_started") {
      const startMs = Math.max(this.buffer.bufferStartMs, originMs + turn.audioStartMs);
      this.turn = { itemId: newItemId(), startMs };
      this.emit("input_audio_buffer.speech_started", { audio_start_ms: Math.round(startMs), item_id: this.turn.itemId });
      if (settings.interruptResponse && this.config.kind === "realtime") this.bargeIn();
      return;
    }
    const current = this.turn ?? { itemId: newItemId(), startMs: this.buffer.bufferStartMs };
    const endMs = Math.min(this.buffer.nowMs, originMs + turn.audioEndMs);
    this.emit("input_audio_buffer.speech_stopped", { audio_end_ms: Math.round(endMs), item_id: current.itemId });
    this.commit(current.itemId, current.startMs, endMs, settings.createResponse);
  }

  /** Speech over a reply: the reply stops, and the item it was speaking keeps only what has played. */
  private bargeIn(): void {
    this.reply?.cancel("turn_detected");
    const spoken = this.reply?.spoken ?? this.lastSpoken;
    if (!spoken?.firstAudioAt || spoken.part.audioMs === undefined) return;
    const playedMs = Math.floor(performance.now() - spoken.firstAudioAt);
    if (playedMs >= spoken.part.audioMs || !this.conversation.find(spoken.item.id)) return;
    cutTranscript(spoken.part, playedMs);
    this.emit("conversation.item.truncated", { item_id: spoken.item.id, content_index: 0, audio_end_ms: playedMs });
  }

  private commit(itemId: string, fromMs: number, toMs: number, respond: boolean): void {
    const samples = this.buffer.slice(fromMs, toMs);
    this.buffer.dropBefore(toMs);
    this.turn = undefined;
    const part: ContentPart = { type: "input_audio", transcript: null, wav: wavOf(samples, this.buffer.rate) };
    const item: Item = { id: itemId, type: "message", role: "user", status: "completed", content: [part] };
    const previous = this.conversation.add(item);
    this.emit("input_audio_buffer.committed", { previous_item_id: previous, item_id: itemId });
    this.emit("conversation.item.added", { previous_item_id: previous, item: itemWire(item) });
    this.emit("conversation.item.done", { previous_item_id: previous, item: itemWire(item) });
    this.startTranscription(item, part);
    if (respond && this.config.kind === "realtime" && !this.reply?.active) this.startReply({}, undefined);
  }

  private startTranscription(item: Item, part: ContentPart): void {
    const config = this.config.transcription;
    if (!config) {
      if (this.config.kind === "transcription") this.emit("conversation.item.input_audio_transcription.failed", { item_id: item.id, content_index: 0, error: { type: "invalid_request_error", code: "no_transcription_model", message: "This session has no transcription model: set audio.input.transcription.model", param: null } });
      return;
    }
    item.transcribed = transcribe(this.deps, config, part.wav!, this.work.signal, (delta) => {
      this.emit("conversation.item.input_audio_transcription.delta", { item_id: item.id, content_index: 0, delta });
    }).then((transcript) => {
      part.transcript = transcript.text;
      this.emit("conversation.item.input_audio_transcription.completed", {
        item_id: item.id, content_index: 0, transcript: transcript.text,
        usage: { type: "tokens", input_tokens: transcript.inputTokens, output_tokens: transcript.outputTokens, total_tokens: transcript.inputTokens + transcript.outputTokens },
      });
    }, (error: unknown) => {
      const apiError = toApiError(error);
      this.emit("conversation.item.input_audio_transcription.failed", { item_id: item.id, content_index: 0, error: { type: "invalid_request_error", code: apiError.code, message: apiError.message, param: apiError.param } });
    });
  }

  private itemOf(input: ClientItem): { item: Item; clip?: ContentPart } {
    const item: Item = {
      id: input.id ?? newItemId(), type: input.type, status: "completed",
      ...(input.type === "message" ? { role: input.role ?? "user" } : {}),
      ...(input.call_id !== undefined ? { call_id: input.call_id } : {}),
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.arguments !== undefined ? { arguments: input.arguments } : {}),
      ...(input.output !== undefined ? { output: input.output } : {}),
    };
    if (input.type === "function_call_output" && !input.call_id) throw new ClientEventError("A function_call_output item needs the call_id of the call it answers", "item.call_id", "missing_required_parameter");
    if (input.type === "function_call" && (!input.call_id || !input.name)) throw new ClientEventError("A function_call item needs a call_id and a name", "item.call_id", "missing_required_parameter");
    if (input.type === "mcp_approval_response") {
      const id = input.approval_request_id;
      if (id === undefined || input.approve === undefined) throw new ClientEventError("An mcp_approval_response item needs approval_request_id and approve (true or false)", "item.approval_request_id", "missing_required_parameter");
      if (!this.mcp.isPending(id)) throw new ClientEventError(`No MCP approval request '${id}' is waiting in this session`, "item.approval_request_id", "invalid_value");
      item.mcp = { type: input.type, approval_request_id: id, approve: input.approve, reason: input.reason ?? null };
      return { item };
    }
    let clip: ContentPart | undefined;
    if (input.type === "message") {
      item.content = (input.content ?? []).map((part, index) => {
        const type = part.type === "text" ? (item.role === "assistant" ? "output_text" : "input_text") : part.type === "audio" ? "output_audio" : part.type;
        if (type === "input_audio" && part.audio !== undefined) {
          let samples: Int16Array;
          try {
            samples = decodeAudio(this.config.inputFormat, new Uint8Array(Buffer.from(part.audio, "base64")));
          } catch (error) {
            throw new ClientEventError(`Cannot read the audio: ${(error as Error).message}`, `item.content[${index}].audio`, "invalid_value");
          }
          clip = { type, transcript: part.transcript ?? null, wav: wavOf(samples, this.buffer.rate) };
          return clip;
        }
        return type === "input_audio" || type === "output_audio" ? { type, transcript: part.transcript ?? null } : { type, text: part.text ?? "" };
      });
    }
    return clip ? { item, clip } : { item };
  }

  private createItem(input: ClientItem, previousId: string | null | undefined): void {
    const { item, clip } = this.itemOf(input);
    const previous = this.conversation.add(item, previousId);
    this.emit("conversation.item.added", { previous_item_id: previous, item: itemWire(item) });
    this.emit("conversation.item.done", { previous_item_id: previous, item: itemWire(item) });
    if (clip && clip.transcript === null) this.startTranscription(item, clip);
  }

  private truncate(itemId: string, contentIndex: number, audioEndMs: number): void {
    const item = this.conversation.find(itemId);
    if (!item) throw new ClientEventError(`Error truncating item: the item with id '${itemId}' does not exist`, "item_id", "item_not_found");
    const part = item.content?.[contentIndex];
    if (item.role !== "assistant" || part?.type !== "output_audio") throw new ClientEventError("Only an assistant message's audio can be truncated", "content_index", "invalid_value");
    if (audioEndMs > (part.audioMs ?? 0)) throw new ClientEventError(`Audio content of ${Math.round(part.audioMs ?? 0)}ms is shorter than ${audioEndMs}ms`, "audio_end_ms", "invalid_value");
    cutTranscript(part, audioEndMs);
    this.emit("conversation.item.truncated", { item_id: itemId, content_index: contentIndex, audio_end_ms: audioEndMs });
  }

  private createResponse(params: NonNullable<Extract<ClientEvent, { type: "response.create" }>["response"]>, input: ClientItem[] | undefined): void {
    if (this.config.kind === "transcription") throw new ClientEventError("A transcription session makes no responses", "type", "invalid_value");
    const mcpAt = params.tools?.findIndex((tool) => tool.type === "mcp") ?? -1;
    if (mcpAt >= 0) throw new ClientEventError("MCP servers are set for the whole session: name them in session.update's tools", `response.tools[${mcpAt}]`, "invalid_value");
    if (this.reply?.active) throw new ClientEventError(`Conversation already has an active response in progress: ${this.reply.id}. Wait until the response is finished before creating a new one.`, null, "conversation_already_has_active_response");
    this.startReply(params, input?.map((entry) => this.itemOf(entry).item));
  }

  private startReply(params: NonNullable<Extract<ClientEvent, { type: "response.create" }>["response"]>, input: Item[] | undefined): void {
    const setup = { deps: this.deps, config: this.config, conversation: this.conversation, input, params, mcp: this.mcp, emit: (type: string, fields: Record<string, unknown>) => this.emit(type, fields) };
    // the reply's sequences count for the socket's key, and its model and MCP servers are the key's to use
    const reply = this.key ? this.key.run(() => new RealtimeReply(setup)) : new RealtimeReply(setup);
    this.reply = reply;
    void reply.finished.then(() => {
      if (reply.spoken) this.lastSpoken = reply.spoken;
      this.touch();
    });
  }
}

/** A reply's transcript cut to what `playedMs` of its audio said (in proportion, at a word's end). */
function cutTranscript(part: ContentPart, playedMs: number): void {
  const text = part.transcript ?? "";
  const total = part.audioMs ?? 0;
  if (total <= 0) return;
  const keep = Math.floor((text.length * Math.min(playedMs, total)) / total);
  const space = text.lastIndexOf(" ", keep);
  part.transcript = text.slice(0, keep >= text.length ? keep : space > 0 ? space : keep).trimEnd();
  part.audioMs = Math.min(playedMs, total);
}
