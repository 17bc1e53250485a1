// MCP servers on /v1/chat/completions (llamux's extension; OpenAI's Chat Completions has none): a `tools`
// entry {"type": "mcp", "server_label": NAME, "allowed_tools"} attaches server NAME of mcp.json, in the
// Responses API's spelling so one tool entry serves both routes. Only configured servers: a server_url or a
// command is a 400, and without --mcp/--mcp-config no server is configured. Chat Completions has no
// approval round trip, so require_approval may only be "never" (the default here). The server runs the
// calls through the tool loop; the reply is the model's answer, with the calls it ran as `mcp_calls` (the
// Responses API's mcp_call items) on the message, or streamed, in a chunk of their own each.
import type { Context } from "hono";
import { collectChatEvents } from "../../generation/chat.ts";
import type { ChatSpec } from "../../generation/chat-spec.ts";
import type { ChatEvent, PromptProgress } from "../../generation/chat-events.ts";
import { runToolLoop, type ToolLoop, type ToolLoopEvent } from "../../generation/tool-loop.ts";
import type { McpServerRequest, McpToolset } from "../../mcp/mcp-hub.ts";
import { ApiError, badRequest } from "../api-error.ts";
import { serverRun, servedModel, type ServedModelLoad } from "../chat-request.ts";
import type { ServerDeps } from "../deps.ts";
import type { ServedModel } from "../model-service.ts";
import { openRequestServers, refuseCommand, toolFilter } from "../request-mcp.ts";
import type { ChatEvents } from "./chat-stream.ts";
import { streamChatChoices } from "./chat-stream.ts";
import { mcpCallItem, mcpToolChoice, newMcpCallId } from "./responses-mcp.ts";
import type { ChatCompletionRequest } from "./schemas.ts";
import { openAiEventStream } from "./sse.ts";
import { chatChunk, chatCompletionBody, completionId, toUsage } from "./translate.ts";

/** The body without its mcp tools (for the schema, which knows function tools), and the servers they name. */
export function chatMcpServers(raw: unknown): { body: unknown; requests: McpServerRequest[] } {
  const tools = (raw as { tools?: unknown } | null)?.tools;
  if (!Array.isArray(tools) || !tools.some((tool) => (tool as { type?: unknown } | null)?.type === "mcp")) return { body: raw, requests: [] };
  const requests: McpServerRequest[] = [];
  for (const [index, entry] of tools.entries()) {
    const tool = entry as Record<string, unknown>;
    if (tool?.type !== "mcp") continue;
    const param = `tools[${index}]`;
    refuseCommand(tool, param);
    if (tool.server_url !== undefined) {
      throw badRequest("Chat completions attach only MCP servers of mcp.json, by server_label (server_url is for /v1/responses)", `${param}.server_url`);
    }
    const label = tool.server_label;
    if (typeof label !== "string" || !label) throw badRequest("An mcp tool needs the server_label of a server in mcp.json", `${param}.server_label`);
    if (tool.require_approval !== undefined && tool.require_approval !== null && tool.require_approval !== "never") {
      throw badRequest('Chat completions cannot wait for approvals: require_approval must be "never" (use /v1/responses for approvals)', `${param}.require_approval`);
    }
    const allowedTools = toolFilter(tool.allowed_tools, `${param}.allowed_tools`);
    requests.push({ label, source: { configured: label }, requireApproval: "never", ...(allowedTools ? { allowedTools } : {}), param: `${param}.server_label` });
  }
  return { body: { ...(raw as object), tools: tools.filter((tool) => (tool as { type?: unknown } | null)?.type !== "mcp") }, requests };
}

/** A tool_choice naming an MCP tool ({"type": "mcp", ...}) as the function choice the spec reads. */
function functionChoice(body: ChatCompletionRequest, toolset: McpToolset): ChatCompletionRequest {
  const choice = mcpToolChoice(body.tool_choice, toolset);
  if (choice === undefined || choice === "auto" || choice === "none") return body;
  return { ...body, tool_choice: choice === "required" ? "required" : { type: "function", function: { name: choice.name } } };
}

const LOOP_ONLY = new Set<ToolLoopEvent["type"]>(["round", "server_call", "server_call_delta", "server_result", "approval_request"]);
const isChatEvent = (event: ToolLoopEvent): event is ChatEvent | PromptProgress => !LOOP_ONLY.has(event.type);

type ServerResult = Extract<ToolLoopEvent, { type: "server_result" }>;

/** A call the server ran, as the Responses API's mcp_call item. */
const mcpCallOf = (event: ServerResult) => mcpCallItem(newMcpCallId(), event.tool, JSON.stringify(event.call.arguments), { outcome: event.outcome });

/** The loop's chat events as a choice to stream; each call the server ran goes to `onCall` as it completes. */
function loopChoice(loop: ToolLoop, onCall: (event: ServerResult) => Promise<void>): ChatEvents {
  async function* chatEvents(withProgress: boolean): AsyncGenerator<ChatEvent | PromptProgress> {
    for await (const event of loop.events()) {
      if (event.type === "server_result") await onCall(event);
      else if (isChatEvent(event) && (withProgress || event.type !== "prompt_progress")) yield event;
    }
  }
  return { events: () => chatEvents(false) as AsyncGenerator<ChatEvent>, eventsWithProgress: () => chatEvents(true) };
}

export interface McpChatRequest {
  body: ChatCompletionRequest;
  model: ServedModel;
  requests: McpServerRequest[];
  /** The chat spec of a body (its tool_choice rewritten where it named an MCP tool). */
  specOf(body: ChatCompletionRequest): ChatSpec;
  arrived: number;
  /** How the model is loaded (a draft model, a keep-alive). */
  load: ServedModelLoad;
}

/** A chat completion whose model may call the tools of configured MCP servers, which the server runs. */
export async function mcpChatCompletion(c: Context, deps: ServerDeps, request: McpChatRequest): Promise<Response> {
  const { model, requests } = request;
  if ((request.body.n ?? 1) !== 1) throw badRequest("Cannot run MCP tools for more than one choice: n must be 1", "n");
  const functionNames = (request.body.tools ?? []).map((tool) => tool.function.name);
  const toolset = (await openRequestServers(deps, requests, functionNames, c.req.raw.signal))!;
  let handedOver = false;
  try {
    const failed = toolset.servers.find((server) => "failure" in server);
    if (failed && "failure" in failed) {
      throw new ApiError(424, `Cannot use MCP server "${failed.label}": ${failed.failure.message}`, { param: failed.request.param, code: "mcp_list_tools_failed" });
    }
    const body = functionChoice(request.body, toolset);
    const spec = request.specOf(body);
    const loop = await runToolLoop(servedModel(deps, model, request.load), spec, serverRun(deps, model, c.req.raw.signal, request.arrived), { tools: toolset.tools });
    const id = completionId("chatcmpl");
    const created = Math.floor(Date.now() / 1000);
    const withLogprobs = spec.logprobs !== undefined;
    const reportUsage = (usage: ReturnType<typeof toUsage>) => c.set("usage", { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens });

    if (!body.stream) {
      const calls: Array<Record<string, unknown>> = [];
      async function* withCalls() {
        for await (const event of loop.events()) {
          if (event.type === "server_result") calls.push(mcpCallOf(event));
          yield event;
        }
      }
      const result = await collectChatEvents(withCalls());
      const usage = toUsage(result.usage.promptTokens, [result.usage]);
      reportUsage(usage);
      const completion = chatCompletionBody(id, created, model.id, [result], usage, withLogprobs);
      return c.json({ ...completion, choices: completion.choices.map((choice) => ({ ...choice, message: { ...choice.message, mcp_calls: calls } })) });
    }
    handedOver = true;
    return openAiEventStream(c, async (send, keepAlive) => {
      try {
        const context = { id, created, model: model.id, profile: deps.profile, withLogprobs, returnProgress: body.return_progress === true, keepAlive };
        // Each call the server ran is a chunk of its own, its delta's mcp_calls the call's mcp_call item.
        const sendCall = (event: ServerResult) => send(chatChunk(id, created, model.id, 0, { mcp_calls: [mcpCallOf(event)] }));
        const usages = await streamChatChoices([loopChoice(loop, sendCall)], context, send);
        if (!usages) return;
        const usage = toUsage(usages[0]!.promptTokens, usages);
        reportUsage(usage);
        if (body.stream_options?.include_usage) await send({ id, object: "chat.completion.chunk", created, model: model.id, choices: [], usage });
      } finally {
        await toolset.close();
      }
    });
  } finally {
    if (!handedOver) await toolset.close();
  }
}
