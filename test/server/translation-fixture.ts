// What the dialects' pure translation tests share: served models as plain data (no file is read, no
// engine loads), usage counts, a choice made of hand-written chat events, and a `send` that keeps what
// a writer sends.
import type { RequestUsage } from "../../src/engine/types.ts";
import type { ChatEvent, PromptProgress } from "../../src/generation/chat-events.ts";
import type { ServedModel } from "../../src/server/model-service.ts";
import type { ResolvedModel } from "../../src/store/resolved-model.ts";
import { CONFIG_MEDIA_TYPE, MANIFEST_MEDIA_TYPE } from "../../src/store/manifest.ts";

/** A model given by path: no Modelfile layers. */
export const pathModel: ServedModel = { id: "tiny.gguf", path: "/models/tiny.gguf", created: 0, pinned: false };

/** A store model with these Modelfile layers (PARAMETER lines as `parameters`, TEMPLATE, SYSTEM, MESSAGE). */
export function storeModel(layers: Partial<Pick<ResolvedModel, "parameters" | "template" | "system" | "messages">> = {}): ServedModel {
  const digest = `sha256:${"0".repeat(64)}`;
  const stored: ResolvedModel = {
    name: "tiny:latest", id: "000000000000", manifestDigest: "0".repeat(64), modelPath: "/models/blobs/tiny", adapterPaths: [],
    parameters: {}, messages: [], config: {}, size: 0, modifiedAt: new Date(0),
    manifest: { schemaVersion: 2, mediaType: MANIFEST_MEDIA_TYPE, config: { mediaType: CONFIG_MEDIA_TYPE, digest, size: 0 }, layers: [] },
    ...layers,
  };
  return { id: "tiny:latest", path: stored.modelPath, created: 0, pinned: false, stored };
}

export function usage(fields: Partial<RequestUsage> = {}): RequestUsage {
  return { promptTokens: 7, cachedPromptTokens: 0, completionTokens: 3, timeToFirstTokenMs: 50, promptMs: 20, decodeMs: 500, queueMs: 0, ...fields };
}

/** A choice whose events are these, as a writer reads a ChatChoice's (with or without prompt progress). */
export function choiceOf(events: Array<ChatEvent | PromptProgress>): { events(): AsyncGenerator<ChatEvent>; eventsWithProgress(): AsyncGenerator<ChatEvent | PromptProgress> } {
  return {
    async *events() {
      for (const event of events) if (event.type !== "prompt_progress") yield event;
    },
    async *eventsWithProgress() {
      yield* events;
    },
  };
}

/** A `send` that keeps everything sent, in order. */
export function collector<T = Record<string, unknown>>(): { sent: T[]; send: (item: T) => Promise<void> } {
  const sent: T[] = [];
  return { sent, send: async (item) => void sent.push(item) };
}

/** A text event without logprobs. */
export const content = (text: string): ChatEvent => ({ type: "content", text, logprobs: [] });
export const reasoning = (text: string): ChatEvent => ({ type: "reasoning", text });

/** One tool call as the chat layer streams it: a delta with its id and name, argument deltas, then the whole call. */
export function toolCallEvents(index: number, id: string, name: string, args: Record<string, unknown>): ChatEvent[] {
  const json = JSON.stringify(args);
  const half = Math.ceil(json.length / 2);
  return [
    { type: "tool_call_delta", index, id, name, arguments: "" },
    { type: "tool_call_delta", index, arguments: json.slice(0, half) },
    { type: "tool_call_delta", index, arguments: json.slice(half) },
    { type: "tool_call", index, call: { id, name, arguments: args } },
  ];
}

type DoneEvent = Extract<ChatEvent, { type: "done" }>;

export const done = (finishReason: DoneEvent["finishReason"], fields: Partial<DoneEvent> = {}): DoneEvent =>
  ({ type: "done", finishReason, usage: usage(), ...fields });

/**
 * A wire value as JSON, with each made-up id (a prefix and 32 hex digits: msg_…, fc_…, toolu_…) replaced
 * by its prefix and its place among the ids of that prefix: msg_1, msg_2, fc_1…
 */
export function stableIds<T>(value: T): T {
  const seen = new Map<string, string>();
  const counts = new Map<string, number>();
  const text = JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item !== "string") return item;
    const match = /^([a-z-]+_|[a-z-]+-)([0-9a-f]{32})$/.exec(item);
    if (!match) return item;
    let stable = seen.get(item);
    if (!stable) {
      const count = (counts.get(match[1]!) ?? 0) + 1;
      counts.set(match[1]!, count);
      stable = `${match[1]}${count}`;
      seen.set(item, stable);
    }
    return stable;
  });
  return JSON.parse(text) as T;
}
