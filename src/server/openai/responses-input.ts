// Responses API input as the shared chat path takes it: `instructions` and `input` items become chat
// messages (function calls join the assistant turn before them, their outputs become tool messages),
// function tools become tool definitions, and tool_choice and text.format become the internal shapes.
import type { OutputConstraint } from "../../chat/structured/constraint.ts";
import type { ChatMessage, ToolCall, ToolDefinition } from "../../chat/types.ts";
import type { ToolChoice } from "../../generation/chat-output.ts";
import { logger } from "../../log.ts";
import { badRequest } from "../api-error.ts";
import type { ImageUrlReader } from "../request-images.ts";
import type { AudioReader } from "../request-audio.ts";
import type { ResponseInputItem, ResponsesRequest, ResponseTool } from "./responses-schema.ts";

const log = logger("http");

type Part = { type: string } & Record<string, unknown>;

/** Text, images and audio of a message's content parts. */
async function readParts(
  parts: string | Part[] | null | undefined, param: string, readImage: ImageUrlReader, readAudio: AudioReader,
): Promise<{ text: string; images: Uint8Array[]; audio: Uint8Array[] }> {
  if (parts === undefined || parts === null) return { text: "", images: [], audio: [] };
  if (typeof parts === "string") return { text: parts, images: [], audio: [] };
  const texts: string[] = [];
  const images: Uint8Array[] = [];
  const audio: Uint8Array[] = [];
  for (const [index, part] of parts.entries()) {
    const at = `${param}[${index}]`;
    if ((part.type === "input_text" || part.type === "output_text" || part.type === "text") && typeof part.text === "string") texts.push(part.text);
    else if (part.type === "refusal" && typeof part.refusal === "string") texts.push(part.refusal);
    else if (part.type === "input_image") {
      const url = typeof part.image_url === "string" ? part.image_url : undefined;
      if (!url) throw badRequest("An input_image part needs an image_url (a data: URI or an http(s) URL); file_id is not supported", at);
      images.push(await readImage(url, at));
    } else if (part.type === "input_audio") {
      // as on chat completions: {"type": "input_audio", "input_audio": {"data": base64, "format": "wav" | "mp3"}}
      const value = part.input_audio as { data?: unknown; format?: unknown } | undefined;
      if (typeof value?.data !== "string") throw badRequest('An input_audio part needs {"data": "<base64>", "format": "wav" | "mp3" | "flac"}', `${at}.input_audio`);
      audio.push(readAudio({ data: value.data, ...(typeof value.format === "string" ? { format: value.format } : {}) }, `${at}.input_audio`));
    } else throw badRequest(`Unsupported content part type "${part.type}" (expected input_text, output_text, input_image or input_audio)`, at);
  }
  return { text: texts.join("\n"), images, audio };
}

/** Developer messages are system messages for a chat template. */
const chatRole = (role: string) => (role === "developer" ? "system" : role);

/** The conversation of a request's `input`, after the history a previous response left. */
export async function inputMessages(
  body: ResponsesRequest, readImage: ImageUrlReader, readAudio: AudioReader, history: ChatMessage[] = [],
): Promise<ChatMessage[]> {
  const messages: ChatMessage[] = [...history];
  const input = body.input ?? "";
  if (typeof input === "string") {
    // Codex's warm-up sends an empty input: an empty user turn, so the template still has a turn to answer.
    messages.push({ role: "user", content: input });
    return messages;
  }
  const knownCalls = new Set(history.flatMap((m) => m.tool_calls?.map((call) => call.id) ?? []));
  let pendingReasoning: string | undefined;
  for (const [index, item] of input.entries()) {
    const param = `input[${index}]`;
    const type = item.type ?? (item.role ? "message" : undefined);
    switch (type) {
      case "message": {
        if (!item.role) throw badRequest("A message item needs a role", `${param}.role`);
        const { text, images, audio } = await readParts(item.content as string | Part[] | undefined, `${param}.content`, readImage, readAudio);
        const message: ChatMessage = { role: chatRole(item.role), content: text };
        if (images.length) message.images = images;
        if (audio.length) message.audio = audio;
        if (message.role === "assistant" && pendingReasoning) message.reasoning_content = pendingReasoning;
        if (message.role === "assistant") pendingReasoning = undefined;
        messages.push(message);
        break;
      }
      case "function_call": {
        if (!item.call_id || !item.name) throw badRequest("A function_call item needs call_id and name", param);
        const call: ToolCall = { id: item.call_id, type: "function", function: { name: item.name, arguments: parseArguments(item.arguments, param) } };
        knownCalls.add(item.call_id);
        const last = messages.at(-1);
        if (last?.role === "assistant") last.tool_calls = [...(last.tool_calls ?? []), call];
        else messages.push({ role: "assistant", content: "", tool_calls: [call], ...(pendingReasoning ? { reasoning_content: pendingReasoning } : {}) });
        pendingReasoning = undefined;
        break;
      }
      case "function_call_output": {
        if (!item.call_id) throw badRequest("A function_call_output item needs a call_id", param);
        if (!knownCalls.has(item.call_id)) throw badRequest(`No tool call found for function call output with call_id ${item.call_id}.`, `${param}.call_id`);
        const output = await readParts(item.output as string | Part[] | undefined, `${param}.output`, readImage, readAudio);
        messages.push({ role: "tool", content: output.text, tool_call_id: item.call_id, ...(output.images.length ? { images: output.images } : {}) });
        break;
      }
      case "reasoning":
        pendingReasoning = reasoningText(item);
        break;
      case "mcp_call": {
        // A call the server ran in an earlier response, passed back: the model's call and what it got.
        const id = typeof item.id === "string" ? item.id : undefined;
        if (!id || !item.name) throw badRequest("An mcp_call item needs id and name", param);
        const call: ToolCall = { id, type: "function", function: { name: item.name, arguments: parseArguments(item.arguments, param) } };
        messages.push({ role: "assistant", content: "", tool_calls: [call] });
        const error = item.error as { message?: unknown } | null | undefined;
        const result = typeof item.output === "string" ? item.output : `Error: ${typeof error?.message === "string" ? error.message : "the call failed"}`;
        messages.push({ role: "tool", content: result, tool_call_id: id });
        break;
      }
      // Listings are made afresh; approval responses are read by responses-mcp.ts against the approval
      // requests the previous response stored (a request item passed back is context only).
      case "mcp_list_tools":
      case "mcp_approval_request":
      case "mcp_approval_response":
        break;
      default:
        throw badRequest(`Unsupported input item type "${type ?? "(none)"}" (expected message, function_call, function_call_output, reasoning or an mcp_* item)`, `${param}.type`);
    }
  }
  return messages;
}

function parseArguments(text: string | undefined, param: string): Record<string, unknown> {
  if (!text) return {};
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw badRequest("function_call arguments must be a JSON object", `${param}.arguments`);
}

/** The text of a reasoning item passed back: its reasoning_text content, else its summary. */
function reasoningText(item: ResponseInputItem): string | undefined {
  const parts = [...(Array.isArray(item.content) ? item.content : []), ...(Array.isArray(item.summary) ? (item.summary as Part[]) : [])];
  const text = parts.map((part) => (typeof part.text === "string" ? part.text : "")).join("");
  return text || undefined;
}

/**
 * Function tools as chat tool definitions; MCP tools are read by responses-mcp.ts, and other tool types
 * (hosted search, computer use) cannot run here and are left out.
 */
export function toolDefinitions(tools: ResponseTool[] | null | undefined): ToolDefinition[] {
  const out: ToolDefinition[] = [];
  for (const [index, tool] of (tools ?? []).entries()) {
    if (tool.type === "mcp") continue;
    if (tool.type !== "function") {
      log.warn(`ignored tools[${index}] of type "${tool.type}": only function tools run on a local model`);
      continue;
    }
    if (!tool.name) throw badRequest("A function tool needs a name", `tools[${index}].name`);
    out.push({
      type: "function",
      function: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), ...(tool.parameters ? { parameters: tool.parameters } : {}) },
    });
  }
  return out;
}

/** tool_choice: "auto", "none", "required", or {"type": "function", "name"}. */
export function responsesToolChoice(value: unknown): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === "auto" || value === "none" || value === "required") return value;
  const named = value as { type?: unknown; name?: unknown };
  if (typeof value === "object" && named.type === "function" && typeof named.name === "string" && named.name) return { name: named.name };
  throw badRequest('tool_choice must be "auto", "none", "required" or {"type": "function", "name": ...}', "tool_choice");
}

/** text.format: json_schema and json_object constrain the reply by grammar; "text" does not. */
export function textFormatConstraint(text: ResponsesRequest["text"]): OutputConstraint | undefined {
  const format = text?.format;
  if (!format || format.type === "text") return undefined;
  if (format.type === "json_object") return { type: "json_object" };
  if (format.type === "json_schema") {
    if (!format.schema) throw badRequest("text.format.schema is required for json_schema", "text.format.schema");
    return { type: "json_schema", schema: format.schema };
  }
  throw badRequest(`text.format type "${format.type}" is not supported; use "text", "json_object" or "json_schema"`, "text.format.type");
}

/** Leading system and developer messages as one system message: many chat templates take only one, first. */
export function withOneSystemMessage(messages: ChatMessage[]): ChatMessage[] {
  const leading = messages.findIndex((m) => m.role !== "system");
  const count = leading < 0 ? messages.length : leading;
  if (count < 2) return messages;
  const text = messages.slice(0, count).map((m) => m.content ?? "").filter(Boolean).join("\n\n");
  return [{ role: "system", content: text }, ...messages.slice(count)];
}
