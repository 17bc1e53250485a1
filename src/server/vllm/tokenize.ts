// POST /tokenize: a prompt, or chat messages rendered with the model's template, as the token ids the
// engine would see, with the model's context length: {count, max_model_len, tokens, token_strs}.
import type { Context } from "hono";
import { ChatTemplateError, CHATML_TEMPLATE, renderChatTemplate, tokenizerAddsBos } from "../../chat/template.ts";
import type { EngineProcess } from "../../engine/engine-process.ts";
import { badRequest } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";
import { toChatMessages } from "../openai/translate.ts";
import { readJsonBody, validate } from "../validation.ts";
import { tokenizeSchema, type TokenizeRequest } from "./schemas.ts";

/** Renders the chat form's messages as /v1/chat/completions does; template failures are the client's 400. */
function renderChat(body: TokenizeRequest, chat: NonNullable<TokenizeRequest["messages"]>, engine: EngineProcess): string {
  const addGenerationPrompt = body.add_generation_prompt ?? true;
  const continueFinal = body.continue_final_message ?? false;
  if (continueFinal && addGenerationPrompt) throw badRequest("Cannot set both `continue_final_message` and `add_generation_prompt` to True.");
  if (body.chat_template) {
    throw badRequest("Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.", "chat_template");
  }
  const { info } = engine;
  const messages = toChatMessages(chat);
  let prompt: string;
  try {
    prompt = renderChatTemplate(info.chatTemplate ?? CHATML_TEMPLATE, messages, {
      ...(body.tools ? { tools: body.tools } : {}),
      addGenerationPrompt,
      bosToken: info.bosText,
      eosToken: info.eosText,
      ...(body.chat_template_kwargs ? { variables: body.chat_template_kwargs } : {}),
    });
  } catch (error) {
    if (error instanceof ChatTemplateError) throw badRequest(error.message);
    throw error;
  }
  if (!continueFinal) return prompt;
  // As Hugging Face's apply_chat_template: cut the prompt right after the final message's text.
  const finalText = (messages.at(-1)?.content ?? "").trim();
  const end = prompt.lastIndexOf(finalText);
  if (!finalText || end < 0) throw badRequest("continue_final_message is set but the final message does not appear in the chat after applying the chat template!");
  return prompt.slice(0, end + finalText.length);
}

/** Each token's own text (vLLM returns the tokenizer's raw pieces, e.g. "Ġthe"; llama.cpp gives the decoded text). */
function tokenStrings(engine: EngineProcess, tokens: number[]): Promise<string[]> {
  return Promise.all(tokens.map((token) => engine.detokenize([token])));
}

export function tokenize(deps: ServerDeps) {
  return async function tokenizeHandler(c: Context) {
    const body = validate(tokenizeSchema, await readJsonBody(c));
    // As vLLM's request union: a body with a prompt is the prompt form, whatever else it carries.
    const form = body.prompt !== undefined ? { prompt: body.prompt } : body.messages !== undefined ? { messages: body.messages } : undefined;
    if (!form) throw badRequest("Either \"prompt\" or \"messages\" is required", "prompt");
    const model = deps.models.resolve(body.model ?? undefined);
    const engine = await deps.models.engine(model);

    let tokens: number[];
    if (form.prompt !== undefined) {
      tokens = await engine.tokenize(form.prompt, { addSpecial: body.add_special_tokens ?? true, parseSpecial: true });
    } else {
      const prompt = renderChat(body, form.messages, engine);
      // Unset: the chat route's rule, so count equals that route's usage.prompt_tokens.
      const addSpecial = body.add_special_tokens ?? tokenizerAddsBos(prompt, engine.info.bosText);
      tokens = await engine.tokenize(prompt, { addSpecial, parseSpecial: true });
    }
    return c.json({
      count: tokens.length,
      max_model_len: engine.info.contextPerSequence,
      tokens,
      token_strs: body.return_token_strs ? await tokenStrings(engine, tokens) : null,
    });
  };
}
