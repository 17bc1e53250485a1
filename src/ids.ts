// Every id llamux makes up for the wire, in one place, shaped as the service whose API it speaks writes
// them, since clients look at the prefixes (Claude Code's tool_use ids are `toolu_…`, the Responses
// API's items `fc_…`/`msg_…`/`rs_…` with `call_…` call ids). The random part is 32 hex digits.
const PREFIXES = {
  // OpenAI chat and text completions, as vLLM writes them
  chatCompletion: "chatcmpl-",
  textCompletion: "cmpl-",
  toolCall: "chatcmpl-tool-",
  // Anthropic's Messages API
  message: "msg_",
  toolUse: "toolu_",
  // OpenAI's Responses API
  response: "resp_",
  outputMessage: "msg_",
  reasoning: "rs_",
  functionCall: "fc_",
  callId: "call_",
  mcpListTools: "mcpl_",
  mcpCall: "mcp_",
  mcpApprovalRequest: "mcpr_",
  // vLLM's rerank and score routes
  rerank: "rerank-",
  score: "score-",
} as const;

export type IdKind = keyof typeof PREFIXES;

export function newId(kind: IdKind): string {
  return PREFIXES[kind] + crypto.randomUUID().replaceAll("-", "");
}

/**
 * A tool call's id (the tool-call reader makes them as chat completions write them) as another API writes
 * them, keeping its random part, so that the same call has the same id wherever it shows.
 */
export function reshapeId(id: string, kind: IdKind): string {
  if (id.startsWith(PREFIXES[kind])) return id;
  return PREFIXES[kind] + (id.startsWith(PREFIXES.toolCall) ? id.slice(PREFIXES.toolCall.length) : id);
}
