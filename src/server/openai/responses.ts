// POST /v1/responses: OpenAI's Responses API (what Codex speaks) as a thin translation onto the shared
// chat path: input items become messages, the reply's chat events become output items or the streamed
// event sequence, and a stored response's conversation continues under previous_response_id.
import type { Context } from "hono";
import type { ChatMessage } from "../../chat/types.ts";
import type { ChatResult } from "../../generation/chat.ts";
import type { EngineHandle } from "../../engine/engine-handle.ts";
import { ApiError, badRequest } from "../api-error.ts";
import { refuseEmbeddingModel, serverRun, servedModel } from "../chat-request.ts";
import { runChat } from "../../generation/run-chat.ts";
import type { ServerDeps } from "../deps.ts";
import { namedEventStream } from "../named-sse.ts";
import { agentContextErrors } from "../reply-limit.ts";
import { keyOwner } from "../middleware/api-key.ts";
import { imageUrlReader } from "../request-images.ts";
import { audioReader } from "../request-audio.ts";
import { readJsonBody, validate } from "../validation.ts";
import { requestOptions } from "../request-options.ts";
import type { ResponseStore } from "./response-store.ts";
import { inputMessages, responsesToolChoice, textFormatConstraint, toolDefinitions, withOneSystemMessage } from "./responses-input.ts";
import { newItemId, outputItems, responseObject, responsesUsage, statusOf, type OutputItem, type ResponseEnvelope } from "./responses-output.ts";
import { responsesSchema, type ResponsesRequest } from "./responses-schema.ts";
import { ResponseEventWriter } from "./responses-stream.ts";

/** The assistant turn an output adds to the stored conversation. */
function assistantTurn(items: OutputItem[]): ChatMessage {
  const text = (type: string, part: string) => items.filter((i) => i.type === type)
    .flatMap((i) => (i.content as Array<Record<string, string>>).filter((p) => p.type === part).map((p) => p.text)).join("");
  const calls = items.filter((i) => i.type === "function_call").map((i) => ({
    id: i.call_id as string, type: "function" as const, function: { name: i.name as string, arguments: JSON.parse(i.arguments as string) as Record<string, unknown> },
  }));
  const reasoning = text("reasoning", "reasoning_text");
  return { role: "assistant", content: text("message", "output_text"), ...(calls.length ? { tool_calls: calls } : {}), ...(reasoning ? { reasoning_content: reasoning } : {}) };
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

export function responses(deps: ServerDeps, store: ResponseStore) {
  return async function responsesHandler(c: Context) {
    const arrived = performance.now();
    const body = validate(responsesSchema, await readJsonBody(c));
    if (body.truncation === "auto") throw badRequest('truncation "auto" is not supported: llamux never drops part of a conversation; send "disabled"', "truncation");
    if (body.background) throw badRequest("background responses are not supported", "background");
    let history: ChatMessage[] = [];
    if (body.previous_response_id) {
      const stored = store.get(keyOwner(c), body.previous_response_id);
      if (!stored) {
        throw new ApiError(404, `Previous response with id '${body.previous_response_id}' not found.`, { param: "previous_response_id", code: "previous_response_not_found" });
      }
      history = stored;
    }
    const model = deps.models.resolve(body.model);
    const options = requestOptions(deps.profile, model, body);
    refuseEmbeddingModel(deps, model);
    const conversation = await inputMessages(body, imageUrlReader(deps, model), audioReader(deps, model), history);
    const system: ChatMessage[] = body.instructions ? [{ role: "system", content: body.instructions }] : [];
    const toolChoice = responsesToolChoice(body.tool_choice);
    const constraint = textFormatConstraint(body.text);
    const templateVariables = reasoningVariables(body);

    const { engine, choices, settings } = await runChat(servedModel(deps, model), {
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
    }, serverRun(deps, model, c.req.raw.signal, arrived)).catch(agentContextErrors(deps.profile));
    const sampling = settings.sampling;
    const choice = choices[0]!;
    const envelope: ResponseEnvelope = {
      id: newItemId("resp"), model: model.id, createdAt: Math.floor(Date.now() / 1000), request: body,
      temperature: sampling.temperature ?? 1, topP: sampling.topP ?? 1,
    };
    const keep = (items: OutputItem[]) => {
      if (body.store !== false) store.put(keyOwner(c), envelope.id, [...conversation, assistantTurn(items)]);
    };
    const report = (usage: ChatResult["usage"]) => c.set("usage", { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens });

    if (!body.stream) {
      const result = await choice.collect();
      report(result.usage);
      const output = outputItems(result);
      keep(output);
      const usage = responsesUsage(result.usage, await countTokens(engine, result.reasoning));
      return c.json(responseObject(envelope, statusOf(result.finishReason), output, { usage }));
    }
    return namedEventStream(c, async (send, keepAlive) => {
      const writer = new ResponseEventWriter(envelope, send);
      await writer.start();
      for await (const event of choice.eventsWithProgress()) {
        if (event.type === "prompt_progress") {
          await keepAlive();
          continue;
        }
        if (event.type !== "done") {
          await writer.push(event);
          continue;
        }
        report(event.usage);
        keep(await writer.finish(event, await countTokens(engine, writer.reasoning)));
      }
    });
  };
}
