// The body of POST /v1/responses (OpenAI's Responses API), as far as a local model can honour it.
// Item and content-part types are checked where they are read (responses-input.ts), so an unknown one
// is a 400 that names it.
import { z } from "zod";
import { wireOptionFields } from "../../options/wire-names.ts";

const contentPart = z.looseObject({ type: z.string() });

/**
 * One input item: a message (with or without `type`), a function call, its output, past reasoning, or an
 * earlier response's MCP items passed back (mcp_list_tools, mcp_call, mcp_approval_request) and the
 * client's mcp_approval_response.
 */
const inputItem = z.looseObject({
  type: z.string().optional(),
  role: z.string().optional(),
  content: z.union([z.string(), z.array(contentPart)]).optional(),
  call_id: z.string().optional(),
  name: z.string().optional(),
  arguments: z.string().optional(),
  output: z.union([z.string(), z.array(contentPart)]).nullable().optional(),
});

export const responseToolSchema = z.looseObject({
  type: z.string().describe('"function" or "mcp"; other tool types are left out'),
  name: z.string().optional(),
  description: z.string().nullable().optional(),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  strict: z.boolean().nullable().optional(),
});

export const responsesSchema = z.object({
  model: z.string().optional(),
  input: z.union([z.string(), z.array(inputItem)]).optional().describe("a user message, or a list of input items"),
  instructions: z.string().nullable().optional().describe("a system message put first; not carried over by previous_response_id"),
  tools: z.array(responseToolSchema).nullable().optional(),
  tool_choice: z.unknown().optional().describe('"auto", "none", "required", {"type": "function", "name"} or {"type": "mcp", "server_label", "name"}'),
  parallel_tool_calls: z.boolean().nullable().optional(),
  text: z.looseObject({
    format: z.looseObject({
      type: z.string().describe('"text", "json_object" or "json_schema"'),
      name: z.string().optional(),
      schema: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullable().optional(),
    }).nullable().optional(),
  }).nullable().optional(),
  reasoning: z.looseObject({
    effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh"]).nullable().optional(),
    summary: z.string().nullable().optional(),
  }).nullable().optional(),
  // The option table's parameters as extra fields (vLLM's Responses API takes its sampling fields too).
  ...wireOptionFields(),
  max_output_tokens: z.number().int().min(1).nullable().optional().describe("default: until the context is full"),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().gt(0).max(1).nullable().optional(),
  stream: z.boolean().nullable().optional(),
  store: z.boolean().nullable().optional().describe("keep the response for previous_response_id; default true"),
  previous_response_id: z.string().nullable().optional(),
  metadata: z.record(z.string(), z.unknown()).nullable().optional(),
  truncation: z.enum(["auto", "disabled"]).nullable().optional().describe('"auto" is refused: llamux never truncates silently'),
  user: z.string().optional(),
  include: z.array(z.string()).nullable().optional(),
  stream_options: z.unknown().optional(),
  prompt_cache_key: z.string().nullable().optional(),
  service_tier: z.string().nullable().optional(),
  background: z.boolean().nullable().optional(),
});

export type ResponsesRequest = z.infer<typeof responsesSchema>;
export type ResponseInputItem = z.infer<typeof inputItem>;
export type ResponseTool = z.infer<typeof responseToolSchema>;
