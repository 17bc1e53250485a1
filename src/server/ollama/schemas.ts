// Request bodies of Ollama's native generation routes, as api/types.go defines them. Unset means
// Ollama's default (noted per field); unknown fields are ignored with a warning.
import { z } from "zod";

export const keepAlive = z.union([z.number(), z.string()]).nullable().optional()
  .describe('seconds, or a Go duration such as "5m"; negative keeps the model loaded, 0 unloads it after this request');

const thinkLevels = ["high", "medium", "low", "max"] as const;
const think = z.union([z.boolean(), z.string()]).nullable().optional()
  .refine((value) => typeof value !== "string" || (thinkLevels as readonly string[]).includes(value), {
    error: (issue) => `invalid think value: ${JSON.stringify(issue.input)} (must be "high", "medium", "low", "max", true, or false)`,
  })
  .describe("split reasoning into `thinking`; a level for models that take one");

const format = z.union([z.string(), z.record(z.string(), z.unknown())]).nullable().optional()
  .describe('"json" or a JSON schema that the output must follow');

const options = z.record(z.string(), z.unknown()).nullable().optional().describe("runtime options (defaults.ts)");

/** Fields /api/generate and /api/chat share. */
const commonFields = {
  model: z.string().optional().describe("required; a name from /api/tags or a served model"),
  stream: z.boolean().nullable().optional().describe("NDJSON chunks; default true"),
  format,
  keep_alive: keepAlive,
  options,
  think,
  truncate: z.boolean().nullable().optional().describe("cut an over-long prompt to fit instead of failing; default true"),
  shift: z.boolean().nullable().optional().describe("accepted; llamux ends generation when the context is full"),
  logprobs: z.boolean().nullable().optional(),
  // Not Ollama's: the AI SDK's Ollama provider sends these at the top level; read as options (options win).
  max_output_tokens: z.number().int().nullable().optional().describe("as options.num_predict (options win)"),
  temperature: z.number().nullable().optional().describe("as options.temperature (options win)"),
  top_p: z.number().nullable().optional().describe("as options.top_p (options win)"),
  top_logprobs: z.number().int().min(0, "top_logprobs must be between 0 and 20").max(20, "top_logprobs must be between 0 and 20").nullable().optional(),
};

export const generateSchema = z.object({
  ...commonFields,
  // Not Ollama's: the AI SDK Ollama provider's completion model sends its limit under this name.
  max_tokens: z.number().int().nullable().optional().describe("as options.num_predict (options and max_output_tokens win)"),
  prompt: z.string().nullable().optional().describe("empty: only load the model"),
  suffix: z.string().nullable().optional().describe("text after the insertion point (models with the insert capability)"),
  system: z.string().nullable().optional().describe("replaces the model's system prompt"),
  template: z.string().nullable().optional().describe("a Go template replacing the model's"),
  context: z.array(z.number().int()).nullable().optional().describe("deprecated: token ids of an earlier response, prepended"),
  raw: z.boolean().nullable().optional().describe("send the prompt as is, without the template"),
  images: z.array(z.string()).nullable().optional().describe("base64 images"),
});

const toolCallSchema = z.object({
  id: z.string().optional(),
  function: z.object({
    index: z.number().int().optional(),
    name: z.string(),
    arguments: z.record(z.string(), z.unknown()).default({}).describe("an object, not a JSON string"),
  }),
});

export const chatMessageSchema = z.looseObject({
  role: z.string().min(1).transform((role) => role.toLowerCase()),
  content: z.string().nullable().optional(),
  thinking: z.string().nullable().optional(),
  images: z.array(z.string()).nullable().optional(),
  audio: z.array(z.string()).nullable().optional().describe("llamux extension: base64 WAV, MP3 or FLAC files, as images are"),
  tool_calls: z.array(toolCallSchema).nullable().optional(),
  tool_name: z.string().optional().describe("on a tool message: the tool that answered"),
  tool_call_id: z.string().optional(),
});

export const toolSchema = z.looseObject({
  type: z.string().default("function"),
  function: z.object({ name: z.string().min(1), description: z.string().optional(), parameters: z.record(z.string(), z.unknown()).optional() }),
});

export const chatSchema = z.object({
  ...commonFields,
  messages: z.array(chatMessageSchema).nullable().optional().describe("empty: only load the model"),
  tools: z.array(toolSchema).nullable().optional(),
  tool_choice: z.unknown().optional().describe('llamux extension, as in OpenAI: "auto", "none", "required" or a named function (either shape); one that cannot be honoured is ignored with a warning, as Ollama ignores the field'),
});

export type GenerateRequestBody = z.infer<typeof generateSchema>;
export type ChatRequestBody = z.infer<typeof chatSchema>;
export type NativeChatMessage = z.infer<typeof chatMessageSchema>;

export const embedSchema = z.object({
  model: z.string().optional(),
  input: z.unknown().optional().describe("a string or a list of strings"),
  truncate: z.boolean().nullable().optional().describe("cut inputs longer than the context; default true"),
  dimensions: z.number().int().min(1).nullable().optional().describe("keep the first N dimensions (normalised again)"),
  keep_alive: keepAlive,
  options,
});

export const embeddingsSchema = z.object({
  model: z.string().optional(),
  prompt: z.string().nullable().optional(),
  keep_alive: keepAlive,
  options,
});
