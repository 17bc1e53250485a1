// A Messages API request as the shared chat path takes it: `system` and content blocks become chat
// messages (tool_use blocks are the assistant's tool calls, tool_result blocks tool messages, images go
// through the same guarded reader as chat completions), tools become tool definitions, tool_choice and
// thinking the internal shapes.
import type { ChatMessage, ToolCall, ToolDefinition } from "../../chat/types.ts";
import type { ChatOutputRequest } from "../../generation/chat-output.ts";
import { badRequest } from "../api-error.ts";
import type { ImageUrlReader } from "../request-images.ts";
import type { ContentBlock, CountTokensRequest } from "./schema.ts";

/** The system prompt, or a system message's content: a string, or text blocks joined. */
function systemText(system: CountTokensRequest["system"], at = "system"): string {
  if (system === undefined) return "";
  if (typeof system === "string") return system;
  return system.map((block, index) => {
    if (block.type !== "text" || typeof block.text !== "string") throw badRequest(`${at}.${index}.type: only text blocks may make up a system prompt`, at === "system" ? "system" : undefined);
    return block.text;
  }).join("\n");
}

/** An image block's source as a URL the image reader takes: base64 data becomes a data: URI. */
function imageUrl(block: ContentBlock, at: string): string {
  const source = block.source as { type?: unknown; media_type?: unknown; data?: unknown; url?: unknown } | undefined;
  if (source?.type === "base64" && typeof source.data === "string" && typeof source.media_type === "string") {
    return `data:${source.media_type};base64,${source.data}`;
  }
  if (source?.type === "url" && typeof source.url === "string") return source.url;
  throw badRequest(`${at}.source: an image needs {"type": "base64", "media_type", "data"} or {"type": "url", "url"}`);
}

/** A tool_result's content: a string, or text and image blocks. */
async function toolResult(block: ContentBlock, at: string, readImage: ImageUrlReader): Promise<ChatMessage> {
  const content = block.content as string | ContentBlock[] | undefined;
  const texts: string[] = [];
  const images: Uint8Array[] = [];
  if (typeof content === "string") texts.push(content);
  else if (Array.isArray(content)) {
    for (const [index, part] of content.entries()) {
      if (part.type === "text" && typeof part.text === "string") texts.push(part.text);
      else if (part.type === "image") images.push(await readImage(imageUrl(part, `${at}.content.${index}`), `${at}.content.${index}`));
      else throw badRequest(`${at}.content.${index}.type: a tool_result holds text and image blocks, not "${part.type}"`);
    }
  }
  const text = texts.join("\n");
  return {
    role: "tool", tool_call_id: block.tool_use_id as string,
    content: block.is_error === true && text ? `Error: ${text}` : text,
    ...(images.length ? { images } : {}),
  };
}

const BLOCK_TYPES = "text, image, tool_use, tool_result, thinking, redacted_thinking";

/**
 * The conversation. A user turn's tool results come first (as tool messages, each answering a tool_use
 * of the assistant turn just before), then its text and images.
 */
export async function chatMessages(body: CountTokensRequest, readImage: ImageUrlReader): Promise<ChatMessage[]> {
  const messages: ChatMessage[] = [];
  const system = systemText(body.system);
  if (system) messages.push({ role: "system", content: system });
  let previousToolUses = new Set<string>();
  for (const [index, message] of body.messages.entries()) {
    const at = `messages.${index}`;
    if (message.role === "system") {
      // Claude Code sends these among the turns; where the template cannot take one there, the chat path
      // moves it into the next user turn as a <system-reminder> (src/chat/system-messages.ts)
      messages.push({ role: "system", content: systemText(message.content, `${at}.content`) });
      continue;
    }
    if (message.role !== "user" && message.role !== "assistant") throw badRequest(`${at}.role: expected "user", "assistant" or "system", got "${message.role}"`);
    const blocks: ContentBlock[] = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    const texts: string[] = [];
    const images: Uint8Array[] = [];
    const calls: ToolCall[] = [];
    const results: ChatMessage[] = [];
    let thinking = "";
    for (const [blockIndex, block] of blocks.entries()) {
      const where = `${at}.content.${blockIndex}`;
      const only = (role: string) => {
        if (message.role !== role) throw badRequest(`${where}: a ${block.type} block belongs in a ${role} message`);
      };
      switch (block.type) {
        case "text":
          if (typeof block.text !== "string") throw badRequest(`${where}.text: a text block needs text`);
          texts.push(block.text);
          break;
        case "image":
          images.push(await readImage(imageUrl(block, where), where));
          break;
        case "tool_use":
          only("assistant");
          if (typeof block.id !== "string" || typeof block.name !== "string") throw badRequest(`${where}: a tool_use block needs id and name`);
          calls.push({ id: block.id, type: "function", function: { name: block.name, arguments: (block.input ?? {}) as Record<string, unknown> } });
          break;
        case "tool_result":
          only("user");
          if (typeof block.tool_use_id !== "string" || !previousToolUses.has(block.tool_use_id)) {
            throw badRequest(
              `${at}.content.${blockIndex}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. ` +
                "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
            );
          }
          results.push(await toolResult(block, where, readImage));
          break;
        case "thinking":
          only("assistant");
          if (typeof block.thinking === "string") thinking += block.thinking;
          break;
        case "redacted_thinking":
          break; // encrypted by Anthropic: nothing a local model can read
        default:
          throw badRequest(`${where}.type: Input tag '${block.type}' found using 'type' does not match any of the expected tags: ${BLOCK_TYPES}`);
      }
    }
    for (const result of results) messages.push(result); // a turn may carry thousands of results: no spread
    if (texts.length || images.length || calls.length || thinking || results.length === 0) {
      messages.push({
        role: message.role, content: texts.join("\n"),
        ...(images.length ? { images } : {}), ...(calls.length ? { tool_calls: calls } : {}), ...(thinking ? { reasoning_content: thinking } : {}),
      });
    }
    previousToolUses = new Set(calls.map((call) => call.id!));
  }
  return messages;
}

/** Custom tools as chat tool definitions; Anthropic's server tools (web search, code execution) do not run here. */
export function toolDefinitions(tools: CountTokensRequest["tools"]): ToolDefinition[] {
  return (tools ?? []).map((tool, index) => {
    if (tool.type !== undefined && tool.type !== "custom") {
      throw badRequest(`tools.${index}.type: server tool "${tool.type}" is not available on a local model; declare custom tools with name, description and input_schema`);
    }
    return {
      type: "function",
      function: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), parameters: tool.input_schema ?? { type: "object", properties: {} } },
    };
  });
}

/** tool_choice and thinking as the output plan takes them; any and tool force calls by grammar. */
export function outputRequest(body: CountTokensRequest): ChatOutputRequest {
  const choice = body.tool_choice;
  const forced = choice?.type === "any" || choice?.type === "tool";
  if (forced && body.thinking !== undefined && body.thinking.type !== "disabled") throw badRequest("Thinking may not be enabled when tool_choice forces tool use.");
  if (choice?.type === "tool" && !choice.name) throw badRequest('tool_choice.name: required when tool_choice.type is "tool"');
  const toolChoice = choice?.type === "any" ? "required" : choice?.type === "tool" ? { name: choice.name! } : choice?.type;
  const format = body.output_config?.format;
  if (format && (format.type !== "json_schema" || !format.schema)) throw badRequest('output_config.format: expected {"type": "json_schema", "schema": {...}}');
  return {
    tools: toolDefinitions(body.tools),
    parallelToolCalls: choice?.disable_parallel_tool_use !== true,
    ...(toolChoice ? { toolChoice } : {}),
    ...(format ? { constraint: { type: "json_schema" as const, schema: format.schema } } : {}),
  };
}

/** The template's thinking switch: on unless thinking is disabled or absent (an output_config.effort alone turns it on). */
export function thinkingVariables(body: CountTokensRequest): Record<string, unknown> {
  const type = body.thinking?.type;
  const on = type === undefined ? Boolean(body.output_config?.effort) : type !== "disabled";
  return { enable_thinking: on };
}
