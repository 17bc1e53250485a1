// One response of a Realtime session: the conversation becomes a chat spec for the one orchestrator
// (runChat, through the tool loop), its events are written back as the Realtime API's (output items, content parts, text or
// transcript and audio deltas, function-call arguments, MCP calls), and in audio sessions each finished
// piece of the reply is spoken through the speech path as the rest is still being written. The session's
// MCP servers run through the tool loop: their calls are mcp_call items of the reply, and the model goes
// on with their results (a call that needs approval ends the reply with an mcp_approval_request). A cancel (the client's, or
// speech that starts over the reply) stops the chat and the speech in their engines within one step or
// frame; the response then ends as `cancelled`.
import { parseToolChoice } from "../../../generation/chat-output.ts";
import type { ChatSpec } from "../../../generation/chat-spec.ts";
import { runToolLoop, type ServerTool, type ToolLoopEvent } from "../../../generation/tool-loop.ts";
import type { ToolDefinition } from "../../../chat/types.ts";
import type { RequestUsage } from "../../../engine/types.ts";
import { EngineError } from "../../../engine/types.ts";
import { EngineLeases } from "../../../engine/engine-leases.ts";
import { newId, reshapeId } from "../../../ids.ts";
import { mergeOptionValues } from "../../../options/values.ts";
import { readWireOptions } from "../../../options/wire-names.ts";
import { resolveVoice } from "../../../audio/voices.ts";
import { badRequest, toApiError } from "../../api-error.ts";
import { modelOptions, refuseEmbeddingModel, serverRun, servedModel } from "../../chat-request.ts";
import type { ServerDeps } from "../../deps.ts";
import { voiceFolders } from "../speech.ts";
import { mcpApprovalRequestItem, mcpCallItem, mcpToolChoice } from "../responses-mcp.ts";
import type { ResponseParams } from "./client-events.ts";
import { chatMessages, itemWire, newItemId, transcriptsOf, type ContentPart, type Conversation, type Item } from "./conversation.ts";
import type { SessionMcp } from "./realtime-mcp.ts";
import { ReplySpeaker } from "./reply-speaker.ts";
import type { Modality, SessionConfig } from "./session-config.ts";
import { formatWire } from "./session-wire.ts";
import { SegmentCutter } from "./speech-segments.ts";

export type Emit = (type: string, fields: Record<string, unknown>) => void;
export type CancelReason = "client_cancelled" | "turn_detected";
type Status = "in_progress" | "completed" | "cancelled" | "incomplete" | "failed";

export interface ReplySetup {
  deps: ServerDeps;
  config: SessionConfig;
  conversation: Conversation;
  /** The items response.create gave as the reply's own context, in place of the conversation. */
  input: Item[] | undefined;
  params: ResponseParams;
  /** The session's MCP servers. */
  mcp: SessionMcp;
  emit: Emit;
}

/** The message item being written, and what of its audio has gone out (for a truncation at barge-in). */
export interface SpokenItem {
  item: Item;
  part: ContentPart;
  /** When its first audio left, as performance.now(). */
  firstAudioAt?: number;
}

export class RealtimeReply {
  readonly id = newId("response");
  private readonly stop = new AbortController();
  private cancelReason: CancelReason | undefined;
  private status: Status = "in_progress";
  private statusError: Record<string, unknown> | undefined;
  private usage: Record<string, unknown> | null = null;
  private readonly output: Item[] = [];
  private readonly modalities: Modality[];
  private readonly outOfBand: boolean;
  spoken: SpokenItem | undefined;
  /** Settles when response.done has been sent. */
  readonly finished: Promise<void>;

  constructor(private readonly setup: ReplySetup) {
    const asked = setup.params.output_modalities ?? setup.params.modalities;
    this.modalities = asked ? (asked.includes("audio") ? ["audio"] : ["text"]) : setup.config.outputModalities;
    this.outOfBand = setup.params.conversation === "none";
    this.finished = this.run();
  }

  get active(): boolean {
    return this.status === "in_progress";
  }

  /** Stops the reply; false when it has ended already. */
  cancel(reason: CancelReason): boolean {
    if (!this.active || this.stop.signal.aborted) return false;
    this.cancelReason = reason;
    this.stop.abort();
    return true;
  }

  private emit(type: string, fields: Record<string, unknown>): void {
    this.setup.emit(type, { response_id: this.id, ...fields });
  }

  private wire(): Record<string, unknown> {
    const { config } = this.setup;
    const details = this.status === "cancelled" ? { type: "cancelled", reason: this.cancelReason ?? "client_cancelled" }
      : this.status === "incomplete" ? { type: "incomplete", reason: "max_output_tokens" }
      : this.status === "failed" ? { type: "failed", error: this.statusError } : null;
    return {
      object: "realtime.response", id: this.id, status: this.status, status_details: details,
      output: this.output.map(itemWire), conversation_id: this.outOfBand ? null : `conv_${config.id.slice(5)}`,
      output_modalities: this.modalities, max_output_tokens: this.setup.params.max_output_tokens ?? this.setup.params.max_response_output_tokens ?? config.maxOutputTokens,
      audio: { output: { format: formatWire(config.outputFormat), voice: config.voice } },
      usage: this.usage, metadata: this.setup.params.metadata ?? null,
    };
  }

  private async run(): Promise<void> {
    this.setup.emit("response.created", { response: this.wire() });
    const leases = new EngineLeases();
    try {
      const finishReason = await leases.run(() => this.generate());
      this.status = this.stop.signal.aborted ? "cancelled" : finishReason === "length" ? "incomplete" : "completed";
    } catch (error) {
      if (this.stop.signal.aborted) {
        this.status = "cancelled";
      } else {
        const apiError = toApiError(error);
        this.status = "failed";
        this.statusError = { type: apiError.status >= 500 ? "server_error" : "invalid_request_error", code: apiError.code, message: apiError.message };
        this.setup.emit("error", { error: { type: this.statusError.type, code: apiError.code ?? "response_failed", message: apiError.message, param: apiError.param, event_id: null } });
      }
    } finally {
      leases.end();
    }
    for (const item of this.output) if (item.status === "in_progress") item.status = "incomplete";
    this.setup.emit("response.done", { response: this.wire() });
  }

  /** The spec's tools: the response's own, else the session's. */
  private tools(): ToolDefinition[] {
    const listed = this.setup.params.tools ?? this.setup.config.tools;
    return listed.flatMap((tool) => {
      const entry = tool as { type?: string; name?: string; description?: string; parameters?: Record<string, unknown> };
      if (entry.type === "mcp" || !entry.name) return [];
      return [{ type: "function" as const, function: { name: entry.name, ...(entry.description ? { description: entry.description } : {}), ...(entry.parameters ? { parameters: entry.parameters } : {}) } }];
    });
  }

  private async speaker(): Promise<ReplySpeaker | undefined> {
    const { deps, config } = this.setup;
    if (!this.modalities.includes("audio")) return undefined;
    if (!config.voiceModel) throw badRequest("This session has no speech model to answer in audio: start the server with --realtime-voice-model, or name a voice_model in --realtime-config", "session.output_modalities");
    const voiceModel = deps.models.resolve(config.voiceModel);
    if (!deps.models.speaks(voiceModel)) throw badRequest(`Model "${voiceModel.id}" has no speech output: the voice model must be a text-to-speech model`, "session.audio.output.voice");
    const speaker = await resolveVoice(config.voice, voiceFolders(deps, voiceModel));
    return new ReplySpeaker({
      model: servedModel(deps, voiceModel),
      options: mergeOptionValues(deps.profile.openAiDefaults, modelOptions(voiceModel), readWireOptions(config.speech.options)),
      speaker, format: config.outputFormat, speed: config.speed, maxFrames: config.speech.maxFrames, signal: this.stop.signal,
      onAudio: (bytes) => this.audioOut(bytes),
    });
  }

  private audioOut(bytes: Uint8Array): void {
    const spoken = this.spoken;
    if (!spoken || this.stop.signal.aborted) return;
    spoken.firstAudioAt ??= performance.now();
    const rateBytes = this.setup.config.outputFormat === "pcm16" ? 48 : 8;
    spoken.part.audioMs = (spoken.part.audioMs ?? 0) + bytes.length / rateBytes;
    this.emit("response.output_audio.delta", { item_id: spoken.item.id, output_index: this.output.indexOf(spoken.item), content_index: 0, delta: Buffer.from(bytes).toString("base64") });
  }

  private addItem(item: Item): number {
    const outputIndex = this.output.push(item) - 1;
    this.emit("response.output_item.added", { output_index: outputIndex, item: itemWire(item) });
    if (!this.outOfBand) {
      const previous = this.setup.conversation.add(item);
      this.setup.emit("conversation.item.added", { previous_item_id: previous, item: itemWire(item) });
    }
    return outputIndex;
  }

  private doneItem(item: Item): void {
    if (item.status === "in_progress") item.status = this.stop.signal.aborted ? "incomplete" : "completed";
    this.emit("response.output_item.done", { output_index: this.output.indexOf(item), item: itemWire(item) });
    if (!this.outOfBand) this.setup.emit("conversation.item.done", { item: itemWire(item) });
  }

  private async generate(): Promise<string> {
    const { deps, config, params } = this.setup;
    const arrived = performance.now();
    const model = deps.models.resolve(config.chatModel);
    refuseEmbeddingModel(deps, model);
    const hears = deps.models.hasAudio(model);
    const items = this.setup.input ?? [...this.setup.conversation.items];
    if (!hears) await transcriptsOf(items);
    const speaker = await this.speaker();
    const audio = speaker !== undefined;
    const maxTokens = params.max_output_tokens ?? params.max_response_output_tokens ?? config.maxOutputTokens;
    const toolset = await this.setup.mcp.toolset();
    const asked = params.tool_choice ?? config.toolChoice;
    const toolChoice = mcpToolChoice(asked, toolset) ?? parseToolChoice(asked);
    const spec: ChatSpec = {
      prompt: { kind: "conversation", messages: chatMessages(params.instructions ?? config.instructions, items, hears), ...(model.stored ? { layers: model.stored } : {}), overflow: "drop-oldest" },
      output: { tools: this.tools(), ...(toolChoice ? { toolChoice } : {}) },
      options: mergeOptionValues(deps.profile.openAiDefaults, modelOptions(model), (params.temperature ?? config.temperature) !== undefined ? { temperature: params.temperature ?? config.temperature! } : {}),
      limit: { ...(maxTokens !== "inf" ? { maxTokens } : {}), overflow: "clamp" },
    };
    const resumed = toolset ? this.setup.mcp.resumedCalls(items, toolset.tools) : [];
    const loop = await runToolLoop(servedModel(deps, model), spec, serverRun(deps, model, this.stop.signal, arrived), { tools: toolset?.tools ?? [], resumed });

    let message: { item: Item; part: ContentPart; index: number } | undefined;
    const cutter = new SegmentCutter();
    // calls by their index in the current generation (indices start again each round), MCP calls also by id
    const calls = new Map<number, Item>();
    const mcpCalls = new Map<number, Item>();
    const mcpCallsById = new Map<string, Item>();
    const openMessage = () => {
      if (message) return message;
      const part: ContentPart = audio ? { type: "output_audio", transcript: "" } : { type: "output_text", text: "" };
      const item: Item = { id: newItemId(), type: "message", role: "assistant", status: "in_progress", content: [part] };
      const index = this.addItem(item);
      this.emit("response.content_part.added", { item_id: item.id, output_index: index, content_index: 0, part: audio ? { type: "audio", transcript: "" } : { type: "text", text: "" } });
      if (audio) this.spoken = { item, part };
      message = { item, part, index };
      return message;
    };
    const openCall = (index: number, id: string, name: string) => {
      let item = calls.get(index);
      if (!item) {
        item = { id: newItemId(), type: "function_call", status: "in_progress", call_id: reshapeId(id, "callId"), name, arguments: "" };
        calls.set(index, item);
        this.addItem(item);
      }
      return item;
    };
    const openMcpCall = (tool: ServerTool, approvalRequestId?: string) => {
      const id = newItemId();
      const { id: _id, ...wire } = mcpCallItem(id, tool, "", approvalRequestId ? { approvalRequestId } : {});
      const item: Item = { id, type: "mcp_call", status: "in_progress", mcp: wire };
      this.addItem(item);
      this.emit("response.mcp_call.in_progress", { item_id: id, output_index: this.output.indexOf(item) });
      return item;
    };

    let usage: RequestUsage | undefined;
    let finishReason = "stop";
    for await (const event of loop.events() as AsyncGenerator<ToolLoopEvent>) {
      if (event.type === "content") {
        if (!event.text) continue;
        const { item, part, index } = openMessage();
        const where = { item_id: item.id, output_index: index, content_index: 0 };
        if (audio) {
          part.transcript += event.text;
          this.emit("response.output_audio_transcript.delta", { ...where, delta: event.text });
          for (const piece of cutter.push(event.text)) speaker.say(piece);
        } else {
          part.text += event.text;
          this.emit("response.output_text.delta", { ...where, delta: event.text });
        }
      } else if (event.type === "tool_call_delta") {
        const item = calls.get(event.index) ?? (event.id && event.name ? openCall(event.index, event.id, event.name) : undefined);
        if (!item || !event.arguments) continue;
        item.arguments += event.arguments;
        this.emit("response.function_call_arguments.delta", { item_id: item.id, output_index: this.output.indexOf(item), call_id: item.call_id, delta: event.arguments });
      } else if (event.type === "tool_call") {
        const item = openCall(event.index, event.call.id, event.call.name);
        item.arguments = JSON.stringify(event.call.arguments);
        item.status = "completed";
        this.emit("response.function_call_arguments.done", { item_id: item.id, output_index: this.output.indexOf(item), call_id: item.call_id, name: item.name, arguments: item.arguments });
        this.doneItem(item);
      } else if (event.type === "round") {
        calls.clear();
        mcpCalls.clear();
      } else if (event.type === "server_call_delta") {
        // a call that waits for approval shows as its approval request once complete
        if (event.tool.requiresApproval) continue;
        let item = mcpCalls.get(event.index);
        if (!item) mcpCalls.set(event.index, item = openMcpCall(event.tool));
        if (!event.arguments) continue;
        item.mcp!.arguments += event.arguments;
        this.emit("response.mcp_call_arguments.delta", { item_id: item.id, output_index: this.output.indexOf(item), delta: event.arguments });
      } else if (event.type === "server_call") {
        const item = (event.index !== undefined ? mcpCalls.get(event.index) : undefined) ?? openMcpCall(event.tool, event.approvalRequestId);
        mcpCallsById.set(event.call.id, item);
        item.mcp!.arguments = JSON.stringify(event.call.arguments);
        this.emit("response.mcp_call_arguments.done", { item_id: item.id, output_index: this.output.indexOf(item), arguments: item.mcp!.arguments });
      } else if (event.type === "server_result") {
        const item = mcpCallsById.get(event.call.id);
        if (!item) continue;
        const { id: _id, ...wire } = mcpCallItem(item.id, event.tool, JSON.stringify(event.call.arguments), {
          outcome: event.outcome, ...(event.approvalRequestId ? { approvalRequestId: event.approvalRequestId } : {}),
        });
        item.mcp = wire;
        item.status = event.outcome.ok ? "completed" : "incomplete";
        this.emit(event.outcome.ok ? "response.mcp_call.completed" : "response.mcp_call.failed", { item_id: item.id, output_index: this.output.indexOf(item) });
        this.doneItem(item);
      } else if (event.type === "approval_request") {
        const id = newItemId();
        const { id: _id, ...wire } = mcpApprovalRequestItem(id, event.tool, JSON.stringify(event.call.arguments));
        const item: Item = { id, type: "mcp_approval_request", status: "completed", mcp: wire };
        this.addItem(item);
        this.doneItem(item);
        this.setup.mcp.waitForApproval({ id, serverLabel: event.tool.origin.label, name: event.tool.serverName, arguments: event.call.arguments, callId: reshapeId(event.call.id, "callId") });
      } else if (event.type === "done") {
        usage = event.usage;
        finishReason = event.finishReason;
      } else if (event.type === "error") {
        throw new EngineError(event.code, event.message);
      }
    }
    if (speaker) {
      for (const piece of cutter.end()) speaker.say(piece);
      await speaker.finish();
    }
    if (message) this.closeMessage(message, audio);
    if (usage) this.usage = usageWire(usage, speaker?.frames ?? 0);
    return finishReason;
  }

  private closeMessage({ item, part, index }: { item: Item; part: ContentPart; index: number }, audio: boolean): void {
    const where = { item_id: item.id, output_index: index, content_index: 0 };
    if (audio) {
      this.emit("response.output_audio.done", where);
      this.emit("response.output_audio_transcript.done", { ...where, transcript: part.transcript ?? "" });
      this.emit("response.content_part.done", { ...where, part: { type: "audio", transcript: part.transcript ?? "" } });
    } else {
      this.emit("response.output_text.done", { ...where, text: part.text ?? "" });
      this.emit("response.content_part.done", { ...where, part: { type: "text", text: part.text ?? "" } });
    }
    this.doneItem(item);
  }
}

/** The reply's usage in the Realtime API's shape: the chat's tokens, and the speech's frames as audio tokens. */
function usageWire(usage: RequestUsage, audioFrames: number): Record<string, unknown> {
  return {
    total_tokens: usage.promptTokens + usage.completionTokens + audioFrames,
    input_tokens: usage.promptTokens,
    output_tokens: usage.completionTokens + audioFrames,
    input_token_details: { text_tokens: usage.promptTokens, audio_tokens: 0, image_tokens: 0, cached_tokens: usage.cachedPromptTokens },
    output_token_details: { text_tokens: usage.completionTokens, audio_tokens: audioFrames },
  };
}
