// POST /tokenize: a prompt, or chat messages rendered with the model's template, as the token ids the
// engine would see, with the model's context length: {count, max_model_len, tokens, token_strs}.
import type { Context } from "hono";
import type { EngineProcess } from "../../engine/engine-process.ts";
import { withoutAttributionLines } from "../../generation/attribution-line.ts";
import { renderChatPrompt } from "../../generation/chat.ts";
import { badRequest } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";
import { toChatMessages } from "../openai/translate.ts";
import { readJsonBody, validate } from "../validation.ts";
import { tokenizeSchema } from "./schemas.ts";

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
      if (body.chat_template) {
        throw badRequest("Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.", "chat_template");
      }
      // The chat route's own rendering, so that count equals that route's usage.prompt_tokens.
      const prompt = await renderChatPrompt(engine, {
        messages: withoutAttributionLines(await toChatMessages(form.messages)),
        ...(body.tools ? { tools: body.tools } : {}),
        addGenerationPrompt: body.add_generation_prompt ?? true,
        continueFinalMessage: body.continue_final_message ?? false,
        ...(body.chat_template_kwargs ? { templateVariables: body.chat_template_kwargs } : {}),
      }, body.add_special_tokens !== undefined ? { addSpecial: body.add_special_tokens } : {});
      tokens = prompt.tokens;
    }
    return c.json({
      count: tokens.length,
      max_model_len: engine.info.contextPerSequence,
      tokens,
      token_strs: body.return_token_strs ? await tokenStrings(engine, tokens) : null,
    });
  };
}
