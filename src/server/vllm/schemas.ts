// Request bodies of vLLM's tokenizer routes (vllm/entrypoints/openai/protocol.py: TokenizeCompletionRequest,
// TokenizeChatRequest, DetokenizeRequest). Unset means vLLM's default, noted on each field.
import { z } from "zod";
import { chatMessageSchema, toolSchema } from "../openai/schemas.ts";

/** Both forms of POST /tokenize in one object: `prompt` selects the prompt form, else `messages` the chat form. */
export const tokenizeSchema = z.object({
  model: z.string().nullable().optional().describe("served model name; unset or empty means the first served model"),
  prompt: z.string().optional().describe("prompt form: the text to tokenize"),
  messages: z.array(chatMessageSchema).optional().describe("chat form: rendered as /v1/chat/completions renders them (template, Modelfile layers, tools, images, audio)"),
  add_special_tokens: z.boolean().optional()
    .describe("add BOS/EOS as the vocabulary asks; prompt form default true; chat form default: as /v1/chat/completions does (BOS only when the template wrote none)"),
  return_token_strs: z.boolean().optional().describe("also return each token's text; default false"),
  add_generation_prompt: z.boolean().optional().describe("chat form: end with the assistant turn's opening; default true"),
  continue_final_message: z.boolean().optional().describe("chat form: leave the final message open so generation continues it; default false"),
  tools: z.array(toolSchema).nullable().optional().describe("chat form: tools passed to the chat template"),
  chat_template: z.string().nullable().optional().describe("chat form: a template to use instead of the model's (refused, as vLLM without --trust-request-chat-template)"),
  chat_template_kwargs: z.record(z.string(), z.unknown()).nullable().optional().describe("chat form: extra template variables, e.g. enable_thinking"),
});
export type TokenizeRequest = z.infer<typeof tokenizeSchema>;

export const detokenizeSchema = z.object({
  model: z.string().nullable().optional().describe("served model name; unset or empty means the first served model"),
  tokens: z.array(z.number().int().min(0)).describe("token ids to turn back into text"),
});
