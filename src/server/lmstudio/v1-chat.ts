// POST /api/v1/chat: LM Studio's native chat, over the shared chat path. Input is text (or text
// messages) with an optional system prompt; the reply is a list of output items (reasoning, message)
// with LM Studio's stats; conversations are stored unless `store` is false and continue from
// `previous_response_id`. Streamed, it is named SSE events from chat.start to chat.end (shapes in routes.ts).
// Images are read as on /v1 (a model without a projector refuses them). `integrations` name MCP servers
// (configured plugins "mcp/NAME", or ephemeral ones by URL) whose tools the server runs through the tool
// loop; each call becomes a tool_call item.
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { z } from "zod";
import type { ChatMessage } from "../../chat/types.ts";
import type { ChatSpec, ModelHandle } from "../../generation/chat-spec.ts";
import { runToolLoop } from "../../generation/tool-loop.ts";
import { lmStudioRestFields, readLmStudioRest } from "../../options/lmstudio-names.ts";
import { mergeOptionValues } from "../../options/values.ts";
import { modelOptions, serverRun } from "../chat-request.ts";
import { requestSchedule } from "../session-hint.ts";
import { ApiError, badRequest } from "../api-error.ts";
import { openRequestServers } from "../request-mcp.ts";
import { integrationRequests, integrationsField } from "./v1-chat-integrations.ts";
import type { ServerDeps } from "../deps.ts";
import type { ServedModel } from "../model-service.ts";
import type { Profile } from "../profiles/profile.ts";
import { readJsonBody, validate } from "../validation.ts";
import { imageUrlReader, type ImageUrlReader } from "../request-images.ts";
import { ttlField, ttlKeepAlive } from "../ttl.ts";
import type { ChatThreads } from "./chat-threads.ts";
import { keyOwner } from "../middleware/api-key.ts";
import { readReply, replyResult, type Reply } from "./v1-chat-reply.ts";
import { lmStudioV1ErrorBody } from "./v1-error.ts";
import type { LmStudioModelService } from "./model-service.ts";

const inputItem = z.union([
  z.object({ type: z.enum(["message", "text"]), content: z.string() }),
  z.object({ type: z.literal("image"), data_url: z.string() }),
]);

export const chatSchema = z.object({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(inputItem).min(1)]).describe("the user's message, or message and image items"),
  system_prompt: z.string().optional(),
  integrations: integrationsField.optional().describe('MCP servers: "mcp/NAME", {"type": "plugin", id, allowed_tools} or {"type": "ephemeral_mcp", server_label, server_url, allowed_tools, headers}'),
  mcp_servers: integrationsField.optional().describe("earlier name of integrations"),
  // llamux's extension: LM Studio's API has no tool_choice; "required" makes the model call one of the integrations' tools.
  tool_choice: z.enum(["auto", "none", "required"]).optional(),
  stream: z.boolean().optional(),
  // temperature, top_p, top_k, min_p, repeat_penalty, max_output_tokens, context_length: the option table's
  ...lmStudioRestFields(),
  reasoning: z.enum(["off", "low", "medium", "high", "on"]).optional(),
  store: z.boolean().optional().describe("keep the conversation and answer a response_id; default true"),
  previous_response_id: z.string().optional(),
  ttl: ttlField,
});

export type ChatRequest = z.infer<typeof chatSchema>;

/** The user's message: text items joined, image items read (a model without vision refuses them). */
export async function userMessage(input: ChatRequest["input"], readImage: ImageUrlReader): Promise<ChatMessage> {
  if (typeof input === "string") return { role: "user", content: input };
  const texts: string[] = [];
  const images: Uint8Array[] = [];
  for (const [index, item] of input.entries()) {
    if (item.type === "image") images.push(await readImage(item.data_url, `input[${index}].data_url`));
    else texts.push(item.content);
  }
  return { role: "user", content: texts.join("\n"), ...(images.length ? { images } : {}) };
}

/** The conversation a request continues: the stored one (its system prompt replaced by a new one), then the user's message. */
export function conversation(body: ChatRequest, threads: ChatThreads, owner: string, user: ChatMessage): ChatMessage[] {
  let history: ChatMessage[] = [];
  if (body.previous_response_id !== undefined) {
    const previous = threads.get(owner, body.previous_response_id);
    if (!previous) throw new ApiError(404, `No stored response "${body.previous_response_id}"`, { param: "previous_response_id" });
    history = previous;
  }
  const system = body.system_prompt !== undefined ? [{ role: "system", content: body.system_prompt }] : [];
  // A new system prompt replaces the stored one.
  const kept = system.length ? history.filter((m) => m.role !== "system") : history;
  return [...system, ...kept, user];
}

/**
 * A /api/v1/chat body as a chat spec, its conversation read already: the profile's defaults < the model's
 * parameters < the body's fields; `reasoning` switches the template's thinking and the reasoning split;
 * `tool_choice` applies to the integrations' tools (which the tool loop adds).
 */
export function v1ChatSpec(profile: Profile, model: ServedModel, body: ChatRequest, messages: ChatMessage[]): ChatSpec {
  const thinking = body.reasoning !== "off";
  return {
    prompt: { kind: "conversation", messages, ...(model.stored ? { layers: model.stored } : {}), ...(body.reasoning !== undefined ? { templateVariables: { enable_thinking: thinking } } : {}) },
    output: { reasoning: thinking, ...(body.tool_choice ? { toolChoice: body.tool_choice } : {}) },
    options: mergeOptionValues(profile.openAiDefaults, modelOptions(model), readLmStudioRest(body)),
    limit: { overflow: profile.replyOverflow },
    // a streamed reply reports prompt_processing.progress
    ...(body.stream ? { promptProgress: true } : {}),
  };
}

export function v1Chat(deps: ServerDeps, models: LmStudioModelService, threads: ChatThreads) {
  return async function v1ChatHandler(c: Context) {
    const arrived = performance.now();
    const body = validate(chatSchema, await readJsonBody(c));
    if (body.integrations && body.mcp_servers) throw badRequest("Give integrations or mcp_servers (its earlier name), not both", "mcp_servers");
    const servers = integrationRequests(body.integrations ?? body.mcp_servers, body.integrations ? "integrations" : "mcp_servers");
    const model = models.resolve(body.model);
    if (models.embeds(model)) throw badRequest(`Model "${model.id}" is an embedding model and does not support chat`, "model");
    // Images are read (and refused) before the model loads.
    const messages = conversation(body, threads, keyOwner(c), await userMessage(body.input, imageUrlReader(deps, model)));

    const spec = { ...v1ChatSpec(deps.profile, model, body, messages), ...requestSchedule(c.req.raw.headers) };
    const wasLoaded = models.loadedOf(model).length > 0;
    let loadSeconds: number | undefined;
    const handle: ModelHandle = {
      engine: async (load) => {
        const loadStarted = performance.now();
        const engine = await models.engine(model, load, ttlKeepAlive(deps.profile, body.ttl));
        if (!wasLoaded) loadSeconds = (performance.now() - loadStarted) / 1000;
        return engine;
      },
    };
    // The servers are listed before the reply starts: one the request may not use is a 400.
    const toolset = await openRequestServers(deps, servers, [], c.req.raw.signal);
    const unlisted = toolset?.servers.find((server) => "failure" in server);
    if (unlisted && "failure" in unlisted) {
      await toolset!.close();
      throw new ApiError(502, `Cannot list the tools of MCP server "${unlisted.label}": ${unlisted.failure.message}`, { param: unlisted.request.param });
    }
    if (body.tool_choice === "required" && !toolset?.tools.length) {
      await toolset?.close();
      throw badRequest('tool_choice "required" needs an integration that offers tools', "tool_choice");
    }
    let loop;
    try {
      loop = await runToolLoop(handle, spec, serverRun(deps, model, c.req.raw.signal, arrived), { tools: toolset?.tools ?? [] });
    } catch (error) {
      await toolset?.close();
      throw error;
    }
    const { engine } = loop;
    const loaded = models.loaded().find((l) => l.engine === engine);
    const instanceId = loaded ? models.instanceId(loaded) : model.id;

    const result = async (reply: Reply) => {
      c.set("usage", { promptTokens: reply.usage.promptTokens, completionTokens: reply.usage.completionTokens });
      const reasoningTokens = reply.reasoning ? (await engine.tokenize(reply.reasoning, { addSpecial: false, parseSpecial: false })).length : 0;
      // With MCP calls, the stored thread keeps each round's calls and results.
      const turns = toolset ? loop.messages.slice(messages.length) : [{ role: "assistant" as const, content: reply.content }];
      const responseId = body.store === false ? undefined : threads.save(keyOwner(c), [...messages, ...turns]);
      return replyResult(reply, { instanceId, reasoningTokens, loadSeconds, responseId });
    };

    if (!body.stream) {
      try {
        const reply = await readReply(loop, async () => {});
        if (reply.error) throw reply.error;
        return c.json(await result(reply));
      } finally {
        await toolset?.close();
      }
    }
    return streamSSE(c, async (stream) => {
      const emit = (event: string, data: Record<string, unknown>) => stream.writeSSE({ event, data: JSON.stringify({ type: event, ...data }) });
      await emit("chat.start", { model_instance_id: instanceId });
      if (loadSeconds !== undefined) {
        await emit("model_load.start", { model_instance_id: instanceId });
        await emit("model_load.end", { model_instance_id: instanceId, load_time_seconds: loadSeconds });
      }
      try {
        const reply = await readReply(loop, emit);
        // After an error, chat.end still carries what was generated, as LM Studio does.
        if (reply.error) await emit("error", lmStudioV1ErrorBody(reply.error));
        await emit("chat.end", { result: await result(reply) });
      } finally {
        await toolset?.close();
      }
    });
  };
}
