// POST /v1/responses: OpenAI's Responses API (what Codex speaks) as a thin translation onto the shared
// chat path: input items become messages, `mcp` tools become the tool loop's server tools, the loop's
// events become output items or the streamed event sequence, and a stored response's conversation
// (with the MCP calls it left waiting for approval) continues under previous_response_id.
import type { Context } from "hono";
import type { ChatMessage } from "../../chat/types.ts";
import type { ParsedToolCall } from "../../chat/output-parser.ts";
import type { ChatResult } from "../../generation/chat.ts";
import type { ChatSpec } from "../../generation/chat-spec.ts";
import type { ToolChoice } from "../../generation/chat-output.ts";
import { runToolLoop } from "../../generation/tool-loop.ts";
import type { OptionValues } from "../../options/values.ts";
import { EngineError, type EngineErrorCode } from "../../engine/types.ts";
import type { EngineHandle } from "../../engine/engine-handle.ts";
import { reshapeId } from "../../ids.ts";
import { ApiError, badRequest } from "../api-error.ts";
import { refuseEmbeddingModel, serverRun, servedModel } from "../chat-request.ts";
import type { ServerDeps } from "../deps.ts";
import type { ServedModel } from "../model-service.ts";
import { namedEventStream } from "../named-sse.ts";
import { agentContextErrors } from "../reply-limit.ts";
import { requestSchedule } from "../session-hint.ts";
import { keyOwner } from "../middleware/api-key.ts";
import { imageUrlReader } from "../request-images.ts";
import { audioReader } from "../request-audio.ts";
import { openRequestServers } from "../request-mcp.ts";
import { readJsonBody, validate } from "../validation.ts";
import { requestOptions } from "../request-options.ts";
import type { ResponseStore } from "./response-store.ts";
import { inputMessages, responsesToolChoice, textFormatConstraint, toolDefinitions, withOneSystemMessage } from "./responses-input.ts";
import { mcpServerRequests, mcpToolChoice, resumedCalls } from "./responses-mcp.ts";
import { newItemId, outputItems, responseObject, responsesUsage, statusOf, type OutputItem, type ResponseEnvelope } from "./responses-output.ts";
import { responsesSchema, type ResponsesRequest } from "./responses-schema.ts";
import { ResponseEventWriter } from "./responses-stream.ts";

/** The assistant turn an output adds to the stored conversation. */
export function assistantTurn(items: OutputItem[]): ChatMessage {
  const text = (type: string, part: string) => items.filter((i) => i.type === type)
    .flatMap((i) => (i.content as Array<Record<string, string>>).filter((p) => p.type === part).map((p) => p.text)).join("");
  const calls = items.filter((i) => i.type === "function_call").map((i) => ({
    id: i.call_id as string, type: "function" as const, function: { name: i.name as string, arguments: JSON.parse(i.arguments as string) as Record<string, unknown> },
  }));
  const reasoning = text("reasoning", "reasoning_text");
  return { role: "assistant", content: text("message", "output_text"), ...(calls.length ? { tool_calls: calls } : {}), ...(reasoning ? { reasoning_content: reasoning } : {}) };
}

/**
 * The turns a reply with MCP calls adds to the stored conversation: each round's assistant turn and the
 * tools' results, with call ids as this API writes them (call_…).
 */
function toolLoopTurns(added: ChatMessage[]): ChatMessage[] {
  return added.map((message) => ({
    ...message,
    ...(message.tool_calls ? { tool_calls: message.tool_calls.map((call) => ({ ...call, ...(call.id ? { id: reshapeId(call.id, "callId") } : {}) })) } : {}),
    ...(message.tool_call_id ? { tool_call_id: reshapeId(message.tool_call_id, "callId") } : {}),
  }));
}

/** reasoning.effort for the chat template: thinking on unless "none", and the level for templates that read one. */
function reasoningVariables(body: ResponsesRequest): Record<string, unknown> | undefined {
  const effort = body.reasoning?.effort;
  if (!effort) return undefined;
  return { enable_thinking: effort !== "none", reasoning_effort: effort };
}

async function countTokens(engine: EngineHandle, text: string): Promise<number> {
  return text ? (await engine.tokenize(text, { addSpecial: false, parseSpecial: false })).length : 0;
}

/**
 * The chat spec of a body: `instructions` before the conversation (its input after any stored history,
 * images read already), function tools, tool_choice, text.format, reasoning.effort and max_output_tokens;
 * `options` from requestOptions. The reply is clamped to the context's room. `mcpChoice` is a
 * tool_choice {"type": "mcp"} already resolved against the request's MCP tools (which the tool loop adds).
 */
export function responsesSpec(model: ServedModel, body: ResponsesRequest, conversation: ChatMessage[], options: OptionValues, mcpChoice?: ToolChoice): ChatSpec {
  const system: ChatMessage[] = body.instructions ? [{ role: "system", content: body.instructions }] : [];
  const toolChoice = mcpChoice ?? responsesToolChoice(body.tool_choice);
  const constraint = textFormatConstraint(body.text);
  const templateVariables = reasoningVariables(body);
  return {
    prompt: {
      kind: "conversation", messages: withOneSystemMessage([...system, ...conversation]),
      ...(model.stored ? { layers: model.stored } : {}), ...(templateVariables ? { templateVariables } : {}),
    },
    output: {
      tools: toolDefinitions(body.tools), parallelToolCalls: body.parallel_tool_calls ?? true,
      ...(toolChoice ? { toolChoice } : {}), ...(constraint ? { constraint } : {}),
    },
    options,
    limit: { ...(body.max_output_tokens != null ? { maxTokens: body.max_output_tokens } : {}), overflow: "clamp" },
  };
}

export function responses(deps: ServerDeps, store: ResponseStore) {
  return async function responsesHandler(c: Context) {
    const arrived = performance.now();
    const body = validate(responsesSchema, await readJsonBody(c));
    if (body.truncation === "auto") throw badRequest('truncation "auto" is not supported: llamux never drops part of a conversation; send "disabled"', "truncation");
    if (body.background) throw badRequest("background responses are not supported", "background");
    let history: ChatMessage[] = [];
    const owner = keyOwner(c);
    if (body.previous_response_id) {
      const stored = store.get(owner, body.previous_response_id);
      if (!stored) {
        throw new ApiError(404, `Previous response with id '${body.previous_response_id}' not found.`, { param: "previous_response_id", code: "previous_response_not_found" });
      }
      history = stored;
    }
    const model = deps.models.resolve(body.model);
    const options = requestOptions(deps.profile, model, body);
    refuseEmbeddingModel(deps, model);
    const conversation = await inputMessages(body, imageUrlReader(deps, model), audioReader(deps, model), history);
    // MCP servers are listed before the reply starts: a server the request may not use is a 400.
    const functionNames = toolDefinitions(body.tools).map((tool) => tool.function.name);
    const toolset = await openRequestServers(deps, mcpServerRequests(body.tools), functionNames, c.req.raw.signal);
    // The request's own MCP sessions end with its reply (a streamed one closes them when the stream ends).
    let toolsetHandedOver = false;
    try {
      const pending = body.previous_response_id ? store.pendingApprovals(owner, body.previous_response_id) : [];
      const resumed = resumedCalls(body.input, pending, toolset);
      const spec = { ...responsesSpec(model, body, conversation, options, mcpToolChoice(body.tool_choice, toolset)), ...requestSchedule(c.req.raw.headers, body) };
      const loop = await runToolLoop(servedModel(deps, model), spec, serverRun(deps, model, c.req.raw.signal, arrived), { tools: toolset?.tools ?? [], resumed })
        .catch(agentContextErrors(deps.profile));
      const sampling = loop.settings.sampling;
      const envelope: ResponseEnvelope = {
        id: newItemId("resp"), model: model.id, createdAt: Math.floor(Date.now() / 1000), request: body,
        temperature: sampling.temperature ?? 1, topP: sampling.topP ?? 1,
      };
      const promptLength = spec.prompt.kind === "conversation" ? spec.prompt.messages.length : 0;
      const keep = (writer: ResponseEventWriter, items: OutputItem[]) => {
        if (body.store === false) return;
        // Without MCP calls the stored turn is the output's; with them, every round's turns and results.
        const turns = toolset || resumed.length ? toolLoopTurns(loop.messages.slice(promptLength)) : [assistantTurn(items)];
        store.put(owner, envelope.id, [...conversation, ...turns], writer.pendingApprovals);
      };
      const report = (usage: ChatResult["usage"]) => c.set("usage", { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens });

      // One writer for both: streamed, its events go out; otherwise only the items it ends with. While a
      // long prompt is processed, a streamed reply sends keep-alive comments.
      const run = async (
        writer: ResponseEventWriter, onError: (event: { type: "error"; code: EngineErrorCode; message: string }) => Promise<void>, keepAlive?: () => Promise<void>,
      ) => {
        await writer.start();
        await writer.listTools(toolset?.servers ?? []);
        for await (const event of loop.events()) {
          if (event.type === "error") return onError(event);
          if (event.type === "prompt_progress") {
            await keepAlive?.();
            continue;
          }
          if (event.type !== "done") {
            await writer.push(event);
            continue;
          }
          report(event.usage);
          const items = await writer.finish(event, await countTokens(loop.engine, writer.reasoning));
          keep(writer, items);
          return { event, items };
        }
        return undefined;
      };

      if (!body.stream && !toolset && resumed.length === 0) {
        // No MCP server: the reply's items as a finished reply gives them.
        let content = "";
        let reasoning = "";
        const toolCalls: ParsedToolCall[] = [];
        for await (const event of loop.events()) {
          if (event.type === "content") content += event.text;
          else if (event.type === "reasoning") reasoning += event.text;
          else if (event.type === "tool_call") toolCalls.push(event.call);
          else if (event.type === "error") throw new EngineError(event.code, event.message);
          else if (event.type === "done") {
            report(event.usage);
            const output = outputItems({ content, reasoning, toolCalls });
            if (body.store !== false) store.put(owner, envelope.id, [...conversation, assistantTurn(output)]);
            const usage = responsesUsage(event.usage, await countTokens(loop.engine, reasoning));
            return c.json(responseObject(envelope, statusOf(event.finishReason), output, { usage }));
          }
        }
        throw new EngineError("engine_failure", "Generation ended without a result");
      }
      if (!body.stream) {
        const writer = new ResponseEventWriter(envelope, async () => {});
        const finished = await run(writer, async (event) => {
          throw new EngineError(event.code, event.message);
        });
        if (!finished) throw new EngineError("engine_failure", "Generation ended without a result");
        const usage = responsesUsage(finished.event.usage, await countTokens(loop.engine, writer.reasoning));
        return c.json(responseObject(envelope, statusOf(finished.event.finishReason), finished.items, { usage }));
      }
      const closing = toolset;
      toolsetHandedOver = true;
      return namedEventStream(c, async (send, keepAlive) => {
        try {
          const writer = new ResponseEventWriter(envelope, send);
          await run(writer, (event) => writer.push(event), keepAlive);
        } finally {
          await closing?.close();
        }
      });
    } finally {
      if (!toolsetHandedOver) await toolset?.close();
    }
  };
}
