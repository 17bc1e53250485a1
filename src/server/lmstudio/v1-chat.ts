// POST /api/v1/chat: LM Studio's native chat, over the shared chat path. Input is text (or text
// messages) with an optional system prompt; the reply is a list of output items (reasoning, message)
// with LM Studio's stats; conversations are stored unless `store` is false and continue from
// `previous_response_id`. Streamed, it is named SSE events from chat.start to chat.end (shapes in routes.ts).
// Images are read as on /v1 (a model without a projector refuses them); MCP integrations are refused.
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { z } from "zod";
import type { ChatMessage } from "../../chat/types.ts";
import type { ModelHandle } from "../../generation/chat-spec.ts";
import { runChat } from "../../generation/run-chat.ts";
import { lmStudioRestFields, readLmStudioRest } from "../../options/lmstudio-names.ts";
import { mergeOptionValues } from "../../options/values.ts";
import { modelOptions, serverRun } from "../chat-request.ts";
import { ApiError, badRequest } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";
import { readJsonBody, validate } from "../validation.ts";
import { imageUrlReader, type ImageUrlReader } from "../request-images.ts";
import { ttlField, ttlKeepAlive } from "../ttl.ts";
import type { ChatThreads } from "./chat-threads.ts";
import { keyOwner } from "../middleware/api-key.ts";
import { readReply, type Reply } from "./v1-chat-reply.ts";
import { lmStudioV1ErrorBody } from "./v1-error.ts";
import type { LmStudioModelService } from "./model-service.ts";

const inputItem = z.union([
  z.object({ type: z.enum(["message", "text"]), content: z.string() }),
  z.object({ type: z.literal("image"), data_url: z.string() }),
]);

const chatSchema = z.object({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(inputItem).min(1)]).describe("the user's message, or message and image items"),
  system_prompt: z.string().optional(),
  integrations: z.array(z.unknown()).optional().describe("MCP servers and plugins: not supported"),
  mcp_servers: z.array(z.unknown()).optional().describe("earlier name of integrations: not supported"),
  stream: z.boolean().optional(),
  // temperature, top_p, top_k, min_p, repeat_penalty, max_output_tokens, context_length: the option table's
  ...lmStudioRestFields(),
  reasoning: z.enum(["off", "low", "medium", "high", "on"]).optional(),
  store: z.boolean().optional().describe("keep the conversation and answer a response_id; default true"),
  previous_response_id: z.string().optional(),
  ttl: ttlField,
});

type ChatRequest = z.infer<typeof chatSchema>;

/** The user's message: text items joined, image items read (a model without vision refuses them). */
async function userMessage(input: ChatRequest["input"], readImage: ImageUrlReader): Promise<ChatMessage> {
  if (typeof input === "string") return { role: "user", content: input };
  const texts: string[] = [];
  const images: Uint8Array[] = [];
  for (const [index, item] of input.entries()) {
    if (item.type === "image") images.push(await readImage(item.data_url, `input[${index}].data_url`));
    else texts.push(item.content);
  }
  return { role: "user", content: texts.join("\n"), ...(images.length ? { images } : {}) };
}

function conversation(body: ChatRequest, threads: ChatThreads, owner: string, user: ChatMessage): ChatMessage[] {
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

export function v1Chat(deps: ServerDeps, models: LmStudioModelService, threads: ChatThreads) {
  return async function v1ChatHandler(c: Context) {
    const arrived = performance.now();
    const body = validate(chatSchema, await readJsonBody(c));
    if (body.integrations?.length || body.mcp_servers?.length) throw new ApiError(501, "MCP integrations and plugins are not supported by this server", { param: "integrations" });
    const model = models.resolve(body.model);
    if (models.embeds(model)) throw badRequest(`Model "${model.id}" is an embedding model and does not support chat`, "model");
    // Images are read (and refused) before the model loads.
    const messages = conversation(body, threads, keyOwner(c), await userMessage(body.input, imageUrlReader(deps, model)));

    const options = mergeOptionValues(deps.profile.openAiDefaults, modelOptions(model), readLmStudioRest(body));
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
    const thinking = body.reasoning !== "off";
    const { engine, choices: [choice] } = await runChat(handle, {
      prompt: { kind: "conversation", messages, ...(model.stored ? { layers: model.stored } : {}), ...(body.reasoning !== undefined ? { templateVariables: { enable_thinking: thinking } } : {}) },
      output: { reasoning: thinking },
      options,
      limit: { overflow: deps.profile.replyOverflow },
      ...(body.stream ? { promptProgress: true } : {}),
    }, serverRun(deps, model, c.req.raw.signal, arrived));
    const loaded = models.loaded().find((l) => l.engine === engine);
    const instanceId = loaded ? models.instanceId(loaded) : model.id;

    const result = async (reply: Reply) => {
      c.set("usage", { promptTokens: reply.usage.promptTokens, completionTokens: reply.usage.completionTokens });
      const decodeSeconds = reply.usage.decodeMs / 1000;
      const reasoningTokens = reply.reasoning ? (await engine.tokenize(reply.reasoning, { addSpecial: false, parseSpecial: false })).length : 0;
      const output = [
        ...(reply.reasoning ? [{ type: "reasoning", content: reply.reasoning }] : []),
        { type: "message", content: reply.content },
      ];
      const responseId = body.store === false ? undefined : threads.save(keyOwner(c), [...messages, { role: "assistant", content: reply.content }]);
      return {
        model_instance_id: instanceId,
        output,
        stats: {
          input_tokens: reply.usage.promptTokens,
          total_output_tokens: reply.usage.completionTokens,
          reasoning_output_tokens: Math.min(reasoningTokens, reply.usage.completionTokens),
          tokens_per_second: decodeSeconds > 0 ? reply.usage.completionTokens / decodeSeconds : 0,
          time_to_first_token_seconds: reply.usage.timeToFirstTokenMs / 1000,
          ...(loadSeconds !== undefined ? { model_load_time_seconds: loadSeconds } : {}),
        },
        ...(responseId ? { response_id: responseId } : {}),
      };
    };

    if (!body.stream) {
      const reply = await readReply(choice!, async () => {});
      if (reply.error) throw reply.error;
      return c.json(await result(reply));
    }
    return streamSSE(c, async (stream) => {
      const emit = (event: string, data: Record<string, unknown>) => stream.writeSSE({ event, data: JSON.stringify({ type: event, ...data }) });
      await emit("chat.start", { model_instance_id: instanceId });
      if (loadSeconds !== undefined) {
        await emit("model_load.start", { model_instance_id: instanceId });
        await emit("model_load.end", { model_instance_id: instanceId, load_time_seconds: loadSeconds });
      }
      const reply = await readReply(choice!, emit);
      // After an error, chat.end still carries what was generated, as LM Studio does.
      if (reply.error) await emit("error", lmStudioV1ErrorBody(reply.error));
      await emit("chat.end", { result: await result(reply) });
    });
  };
}
