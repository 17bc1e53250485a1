// The bodies of POST /v1/messages and /v1/messages/count_tokens (Anthropic's Messages API). Content
// blocks are checked where they are read (messages-input.ts), so an unknown block type is a 400 naming it.
import { z } from "zod";
import { wireOptionFields } from "../../options/wire-names.ts";

export const contentBlockSchema = z.looseObject({ type: z.string() });

const messageSchema = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(contentBlockSchema)]),
});

const toolSchema = z.looseObject({
  type: z.string().optional().describe('"custom" (the default); server tools are refused'),
  name: z.string().min(1),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()).optional(),
});

/** What decides the prompt: shared by messages and count_tokens. */
const promptFields = {
  model: z.string().optional(),
  messages: z.array(messageSchema).min(1, "at least one message is required"),
  system: z.union([z.string(), z.array(contentBlockSchema)]).optional(),
  tools: z.array(toolSchema).optional(),
  tool_choice: z.looseObject({
    type: z.enum(["auto", "any", "tool", "none"]),
    name: z.string().optional(),
    disable_parallel_tool_use: z.boolean().optional(),
  }).optional(),
  thinking: z.looseObject({
    type: z.enum(["enabled", "disabled", "adaptive", "between_tools"]),
    budget_tokens: z.number().int().min(1).optional().describe("reasoning stops after this many tokens; at or above max_tokens (interleaved thinking) the reply still ends at max_tokens"),
  }).optional(),
  output_config: z.looseObject({
    effort: z.string().nullable().optional().describe("with no `thinking`, any effort turns reasoning on"),
    format: z.looseObject({ type: z.string(), schema: z.record(z.string(), z.unknown()).optional() }).nullable().optional()
      .describe('{"type": "json_schema", "schema"}: the reply is JSON valid against it (by grammar)'),
  }).optional(),
};

export const messagesSchema = z.object({
  ...promptFields,
  // The option table's parameters as extra fields (what llama-server's Messages API takes beside Anthropic's).
  ...wireOptionFields(),
  max_tokens: z.number().int().min(1).describe("required: the most tokens the reply may have"),
  stop_sequences: z.array(z.string().min(1)).optional(),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().gt(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  stream: z.boolean().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  service_tier: z.string().optional(),
});

export const countTokensSchema = z.object(promptFields);

export type MessagesRequest = z.infer<typeof messagesSchema>;
export type CountTokensRequest = z.infer<typeof countTokensSchema>;
export type ContentBlock = z.infer<typeof contentBlockSchema>;
