// POST /tokenize: a prompt, or chat messages, rendered as a text completion or a chat completion renders
// them (the orchestrator's renderChat), as the token ids the engine would see, with the model's context
// length: {count, max_model_len, tokens, token_strs}. With images or audio, count is the prompt's length as
// chat's usage.prompt_tokens reports it (each item's embedding tokens included), and tokens are the ids of
// its text (an embedding has no token id).
import type { Context } from "hono";
import type { EngineHandle } from "../../engine/engine-handle.ts";
import { promptTokenCount } from "../../generation/chat.ts";
import type { ChatSpec, PromptSpec } from "../../generation/chat-spec.ts";
import { renderChat } from "../../generation/run-chat.ts";
import { badRequest } from "../api-error.ts";
import { serverRun, servedModel } from "../chat-request.ts";
import type { ServerDeps } from "../deps.ts";
import type { ServedModel } from "../model-service.ts";
import { audioReader } from "../request-audio.ts";
import { imageUrlReader } from "../request-images.ts";
import { requestOptions } from "../request-options.ts";
import { toChatMessages } from "../openai/translate.ts";
import { readJsonBody, validate } from "../validation.ts";
import { tokenizeSchema, type TokenizeRequest } from "./schemas.ts";

/** Each token's own text (vLLM returns the tokenizer's raw pieces, e.g. "Ġthe"; llama.cpp gives the decoded text). */
function tokenStrings(engine: EngineHandle, tokens: number[]): Promise<string[]> {
  return Promise.all(tokens.map((token) => engine.detokenize([token])));
}

type ChatMessagesBody = NonNullable<TokenizeRequest["messages"]>;

/**
 * The chat form's prompt as /v1/chat/completions renders messages: the model's Modelfile layers, images and
 * audio read the same way. (The prompt form is read as /v1/completions reads a text prompt: BOS as the
 * vocabulary asks, unless add_special_tokens is false.)
 */
async function chatFormPrompt(deps: ServerDeps, model: ServedModel, body: TokenizeRequest, messages: ChatMessagesBody): Promise<PromptSpec> {
  return {
    kind: "conversation",
    messages: await toChatMessages(messages, imageUrlReader(deps, model), audioReader(deps, model)),
    ...(model.stored ? { layers: model.stored } : {}),
    addGenerationPrompt: body.add_generation_prompt ?? true,
    continueFinalMessage: body.continue_final_message ?? false,
    ...(body.chat_template_kwargs ? { templateVariables: body.chat_template_kwargs } : {}),
    ...(body.add_special_tokens !== undefined ? { addSpecial: body.add_special_tokens } : {}),
  };
}

export function tokenize(deps: ServerDeps) {
  return async function tokenizeHandler(c: Context) {
    const body = validate(tokenizeSchema, await readJsonBody(c));
    // As vLLM's request union: a body with a prompt is the prompt form, whatever else it carries.
    const messages = body.prompt === undefined ? body.messages : undefined;
    if (body.prompt === undefined && messages === undefined) throw badRequest("Either \"prompt\" or \"messages\" is required", "prompt");
    if (messages && body.chat_template) {
      throw badRequest("Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.", "chat_template");
    }
    const model = deps.models.resolve(body.model ?? undefined);
    const prompt: PromptSpec = messages
      ? await chatFormPrompt(deps, model, body, messages)
      : { kind: "text", text: body.prompt!, addSpecial: body.add_special_tokens ?? true };
    // The parameters a body without any would run with: the same engine a completion of this model gets.
    const spec: ChatSpec = { prompt, output: messages ? { tools: body.tools ?? [] } : {}, options: requestOptions(deps.profile, model, {}), limit: { overflow: "allow" } };
    const { engine, prompt: rendered } = await renderChat(servedModel(deps, model), spec, serverRun(deps, model, c.req.raw.signal, performance.now()));
    const tokens = rendered.tokens;
    return c.json({
      count: await promptTokenCount(engine, rendered, prompt.kind === "conversation" ? prompt.addSpecial : undefined),
      max_model_len: engine.info.contextPerSequence,
      tokens,
      token_strs: body.return_token_strs ? await tokenStrings(engine, tokens) : null,
    });
  };
}
