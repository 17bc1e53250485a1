// Chat messages as the engine's callers pass them, after each profile's translation.

export interface ToolCall {
  id?: string;
  type: "function";
  function: { name: string; arguments: string | Record<string, unknown> };
}

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool" | (string & {});
  /** Text; content parts are flattened to text by the profile (images arrive with the vision issue). */
  content: string | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  reasoning_content?: string;
}

export interface ToolDefinition {
  type: "function";
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}
