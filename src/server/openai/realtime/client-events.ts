// The client events of OpenAI's Realtime API that llamux serves, as zod schemas: the shapes of the GA
// API and of the beta one (the same events; session fields are read in session-config.ts). Unknown fields
// pass (clients send more than they must); a known field of the wrong type is an `error` event.
import { z } from "zod";

/** Longest text of one field (an item's text, instructions, a tool output): the socket's frame bound applies too. */
export const MAX_TEXT_CHARS = 1_000_000;

const text = z.string().max(MAX_TEXT_CHARS);
const eventId = z.string().max(512).optional();

export const contentPartSchema = z.looseObject({
  type: z.enum(["input_text", "input_audio", "text", "output_text", "audio", "output_audio"]),
  text: text.optional(),
  /** base64 audio in the session's input format */
  audio: z.string().optional(),
  transcript: text.nullable().optional(),
});

export const itemSchema = z.looseObject({
  id: z.string().max(256).optional(),
  type: z.enum(["message", "function_call", "function_call_output", "mcp_approval_response"]),
  role: z.enum(["user", "assistant", "system"]).optional(),
  content: z.array(contentPartSchema).max(64).optional(),
  call_id: z.string().max(256).optional(),
  name: z.string().max(256).optional(),
  arguments: text.optional(),
  output: text.optional(),
  status: z.string().optional(),
  /** mcp_approval_response: the approval request it answers, and the answer. */
  approval_request_id: z.string().max(256).optional(),
  approve: z.boolean().optional(),
  reason: z.string().max(10_000).nullable().optional(),
});
export type ClientItem = z.infer<typeof itemSchema>;

const responseParamsSchema = z.looseObject({
  instructions: text.optional(),
  output_modalities: z.array(z.enum(["text", "audio"])).optional(),
  modalities: z.array(z.enum(["text", "audio"])).optional(),
  max_output_tokens: z.union([z.number().int().min(1), z.literal("inf")]).optional(),
  max_response_output_tokens: z.union([z.number().int().min(1), z.literal("inf")]).optional(),
  conversation: z.string().optional(),
  input: z.array(itemSchema).max(1024).optional(),
  tools: z.array(z.looseObject({ type: z.string().optional() })).max(128).optional(),
  tool_choice: z.unknown().optional(),
  temperature: z.number().min(0).max(2).optional(),
  metadata: z.record(z.string(), z.string()).nullable().optional(),
});
export type ResponseParams = z.infer<typeof responseParamsSchema>;

export const clientEventSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("session.update"), event_id: eventId, session: z.looseObject({}) }),
  z.looseObject({ type: z.literal("transcription_session.update"), event_id: eventId, session: z.looseObject({}) }),
  z.looseObject({ type: z.literal("input_audio_buffer.append"), event_id: eventId, audio: z.string() }),
  z.looseObject({ type: z.literal("input_audio_buffer.commit"), event_id: eventId }),
  z.looseObject({ type: z.literal("input_audio_buffer.clear"), event_id: eventId }),
  z.looseObject({ type: z.literal("conversation.item.create"), event_id: eventId, item: itemSchema, previous_item_id: z.string().nullable().optional() }),
  z.looseObject({ type: z.literal("conversation.item.delete"), event_id: eventId, item_id: z.string() }),
  z.looseObject({ type: z.literal("conversation.item.retrieve"), event_id: eventId, item_id: z.string() }),
  z.looseObject({
    type: z.literal("conversation.item.truncate"), event_id: eventId, item_id: z.string(),
    content_index: z.number().int().min(0), audio_end_ms: z.number().int().min(0),
  }),
  z.looseObject({ type: z.literal("response.create"), event_id: eventId, response: responseParamsSchema.optional() }),
  z.looseObject({ type: z.literal("response.cancel"), event_id: eventId, response_id: z.string().optional() }),
]);
export type ClientEvent = z.infer<typeof clientEventSchema>;

/** Why a frame is not a client event, in the words of an `error` event; `param` names the field. */
export class ClientEventError extends Error {
  constructor(message: string, readonly param: string | null = null, readonly code = "invalid_request_error", readonly eventId: string | null = null) {
    super(message);
    this.name = "ClientEventError";
  }
}

const fieldPath = (path: PropertyKey[]) => path.map((p) => (typeof p === "number" ? `[${p}]` : String(p))).join(".").replace(/\.\[/g, "[");

/** One text frame as a client event, or a ClientEventError saying what is wrong with it. */
export function parseClientEvent(frame: string): ClientEvent {
  let value: unknown;
  try {
    value = JSON.parse(frame);
  } catch (error) {
    throw new ClientEventError(`The event is not valid JSON: ${(error as Error).message}`, null, "invalid_json");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ClientEventError("An event must be a JSON object with a \"type\"");
  const eventIdOf = typeof (value as { event_id?: unknown }).event_id === "string" ? (value as { event_id: string }).event_id : null;
  const type = (value as { type?: unknown }).type;
  if (typeof type !== "string") throw new ClientEventError("An event must have a string \"type\"", "type", "invalid_request_error", eventIdOf);
  const result = clientEventSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    if (issue.code === "invalid_union" && issue.path.length === 0) {
      throw new ClientEventError(`Invalid value: '${type.slice(0, 100)}'. Supported values are: ${clientEventSchema.options.map((o) => `'${o.shape.type.value}'`).join(", ")}.`, "type", "invalid_value", eventIdOf);
    }
    const field = fieldPath(issue.path);
    throw new ClientEventError(`Invalid value for '${field}': ${issue.message}`, field || null, "invalid_value", eventIdOf);
  }
  return result.data;
}
