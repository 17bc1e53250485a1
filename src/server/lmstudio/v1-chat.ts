// POST /api/v1/chat: LM Studio's native chat, over the shared chat path. Input is text (or text
// messages) with an optional system prompt; the reply is a list of output items (reasoning, message)
// with LM Studio's stats; conversations are stored unless `store` is false and continue from
// `previous_response_id`. Streamed, it is named SSE events from chat.start to chat.end (shapes in routes.ts).
// Images are read as on /v1 (a model without a projector refuses them); MCP integrations are refused.
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { z } from "zod";
import type { ChatMessage } from "../../chat/types.ts";
import { renderChatPrompt, startChat } from "../../generation/chat.ts";
import { planChatOutput } from "../../generation/chat-output.ts";
import { ApiError, badRequest } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";
import { observeChoices } from "../observe.ts";
import { readJsonBody, validate } from "../validation.ts";
import { imageUrlReader, type ImageUrlReader } from "../request-images.ts";
import { checkContextLength } from "../openai/context-check.ts";
import { ttlField, ttlKeepAlive } from "../openai/ttl.ts";
import type { ChatThreads } from "./chat-threads.ts";
import { keyOwner } from "../middleware/api-key.ts";
import { readReply, type Reply } from "./v1-chat-reply.ts";
import { lmStudioV1ErrorBody } from "./v1-error.ts";
import type { LmStudioModelService } from "./model-service.ts";
import { predictionLoadOverrides, predictionRequest, type LmStudioPrediction } from "./prediction-settings.ts";

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
  temperature: z.number().min(0).optional(),
  top_p: z.number().gt(0).max(1).optional(),
  top_k: z.number().int().min(-1).optional(),
  min_p: z.number().min(0).max(1).optional(),
  repeat_penalty: z.number().gt(0).optional(),
  max_output_tokens: z.number().int().min(1).optional(),
  reasoning: z.enum(["off", "low", "medium", "high", "on"]).optional(),
  context_length: z.number().int().min(16).optional().describe("context for a model this request loads"),
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

    const prediction: LmStudioPrediction = {
      temperature: body.temperature, topP: body.top_p, topK: body.top_k, minP: body.min_p, repeatPenalty: body.repeat_penalty,
      maxTokens: body.max_output_tokens, contextLength: body.context_length,
    };
    const wasLoaded = models.loadedOf(model).length > 0;
    const loadStarted = performance.now();
    const engine = await models.engine(model, predictionLoadOverrides(model, prediction), ttlKeepAlive(deps.profile, body.ttl));
    const loadSeconds = wasLoaded ? undefined : (performance.now() - loadStarted) / 1000;
    const loaded = models.loaded().find((l) => l.engine === engine);
    const instanceId = loaded ? models.instanceId(loaded) : model.id;

    const thinking = body.reasoning !== "off";
    const plan = planChatOutput({ reasoning: thinking }, engine.info.chatTemplate);
    const prompt = await renderChatPrompt(engine, { messages, ...(body.reasoning !== undefined ? { templateVariables: { enable_thinking: thinking } } : {}) });
    checkContextLength(deps.profile, prompt.tokens.length, body.max_output_tokens, engine.info.contextPerSequence);
    const { sampling, fields } = predictionRequest(deps.profile, model, prediction);
    const [choice] = await startChat(engine, prompt, { sampling, ...fields }, {
      signal: c.req.raw.signal, onDone: observeChoices(deps, model.id, arrived), parser: () => plan.parser(prompt.text),
    });

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
      await emit("prompt_processing.start", {});
      await emit("prompt_processing.end", {});
      const reply = await readReply(choice!, emit);
      // After an error, chat.end still carries what was generated, as LM Studio does.
      if (reply.error) await emit("error", lmStudioV1ErrorBody(reply.error));
      await emit("chat.end", { result: await result(reply) });
    });
  };
}
