// Request bodies of the OpenAI-compatible routes. Limits are the hard ones (what the engine cannot
// honour), not the spec's advisory ranges. Unset means "the profile's or the model's default".
import { z } from "zod";
import { ttlField } from "../ttl.ts";
import { structuredOutputFields } from "./structured-output.ts";
import { wireOptionFields } from "../../options/wire-names.ts";

const textPart = z.object({ type: z.literal("text"), text: z.string() });
const imagePart = z.object({
  type: z.literal("image_url"),
  image_url: z.union([z.string(), z.object({ url: z.string(), detail: z.string().optional() })]),
});
const contentPart = z.union([textPart, imagePart, z.looseObject({ type: z.string() })]);

const toolCall = z.object({
  id: z.string().optional(),
  type: z.literal("function").default("function"),
  function: z.object({ name: z.string(), arguments: z.union([z.string(), z.record(z.string(), z.unknown())]) }),
});

// Clients send a reply's message back as it came (`messages.push(completion.choices[0].message)`), so
// the fields a reply carries as null are accepted as null.
export const chatMessageSchema = z.looseObject({
  role: z.string().min(1).describe("system, user, assistant, tool or a template-specific role"),
  content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
  name: z.string().nullable().optional(),
  tool_calls: z.array(toolCall).nullable().optional(),
  tool_call_id: z.string().nullable().optional(),
  reasoning_content: z.string().nullable().optional(),
  reasoning: z.string().nullable().optional(),
});

export const toolSchema = z.object({
  type: z.literal("function"),
  function: z.object({ name: z.string().min(1), description: z.string().optional(), parameters: z.record(z.string(), z.unknown()).optional() }),
});

const stop = z.union([z.string(), z.array(z.string())]).nullable().optional().describe("text that ends generation");

/**
 * Sampling fields shared by chat and text completions: the option table's parameters under their wire
 * names (OpenAI's, vLLM's and llama-server's), and the request-level fields around them.
 */
export const samplingFields = {
  ...wireOptionFields(),
  stop,
  n: z.number().int().min(1).max(128).nullable().optional().describe("choices sampled in parallel"),
  stream: z.boolean().nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
  /** Profile a: Ollama users ask to set these over /v1. */
  num_ctx: z.number().int().min(4).optional(),
  options: z.record(z.string(), z.unknown()).optional(),
  ttl: ttlField,
  /** Profile c: LM Studio's speculative decoding with this model as the draft. */
  draft_model: z.string().nullable().optional().describe("LM Studio: a draft model (same vocabulary, smaller) for speculative decoding"),
};

const samplingSchema = z.object(samplingFields);
/** The sampling and stopping fields any completion body carries. */
export type SamplingRequest = z.infer<typeof samplingSchema>;

export const chatCompletionSchema = z.object({
  model: z.string().optional(),
  messages: z.array(chatMessageSchema).min(1, "at least one message is required"),
  max_tokens: z.number().int().min(-1).nullable().optional().describe("at least 1; -1 is no limit on profile c"),
  max_completion_tokens: z.number().int().min(1).nullable().optional(),
  logprobs: z.boolean().nullable().optional(),
  top_logprobs: z.number().int().min(0).max(20).nullable().optional(),
  tools: z.array(toolSchema).nullable().optional(),
  tool_choice: z.unknown().optional().describe('"auto" (default with tools), "none", "required", {"type": "function", "function": {"name"}} or {"type": "function", "name"}'),
  parallel_tool_calls: z.boolean().nullable().optional().describe("false: at most one call; default true"),
  ...structuredOutputFields,
  chat_template_kwargs: z.record(z.string(), z.unknown()).optional(),
  add_generation_prompt: z.boolean().optional(),
  /** llama-server: stream `prompt_progress` chunks while the prompt is processed. */
  return_progress: z.boolean().nullable().optional().describe("llama-server: report prompt processing progress in the stream"),
  prompt_cache_key: z.string().nullable().optional().describe("OpenAI: the conversation this request continues (a session hint for the prompt cache)"),
  user: z.string().nullable().optional().describe("OpenAI: the end user (a session hint when the request gives no other)"),
  ...samplingFields,
});

export type ChatCompletionRequest = z.infer<typeof chatCompletionSchema>;
