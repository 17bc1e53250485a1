// A conversation with a model (the spec's Conversation): its history, the functions the model may
// call, the MCP servers whose tools it runs itself, and generateResponse, which streams MessageResponses.
// Where the model runs (in this process or behind an OpenAI-compatible server) is the backend's business;
// the MCP tools run here, in the program using the SDK, for either backend.
import type { ToolDefinition } from "../chat/types.ts";
import type { ServerTool } from "../generation/tool-loop.ts";
import { DEFAULT_TOOL_LOOP_LIMITS, limitFailure, OutputBudget, resultText, type ServerToolOutcome, type ToolLoopLimits } from "../generation/tool-results.ts";
import { ChatMessage, type PlainChatMessage } from "./chat-message.ts";
import { toLeapFunction, type LeapFunction, type LeapFunctionInit } from "./functions.ts";
import { GenerationOptions, type GenerationOptionsInit } from "./generation-options.ts";
import type { McpServerInit, McpServerOptions, RegisteredMcpServer } from "./mcp-server.ts";
import { Complete, FunctionCalls, GenerationError, McpToolResult, type GenerationStats, type MessageResponse } from "./message-response.ts";

export interface GenerationRequest {
  messages: ChatMessage[];
  functions: LeapFunction[];
  /** The registered MCP servers' tools, shown to the model beside the functions. */
  mcpTools: ToolDefinition[];
  options: GenerationOptions;
  signal: AbortSignal;
}

/** Runs one generation; a thrown error becomes a MessageResponse.Error. Ends with Complete or Error. */
export interface ConversationBackend {
  generate(request: GenerationRequest): AsyncGenerator<MessageResponse>;
}

export interface GenerateResponseExtras {
  /** Aborting it stops generation; the stream then ends with an Error. */
  signal?: AbortSignal;
  /** Bounds of the MCP tool rounds of one response; defaults as the server's tool loop (generation/tool-loop.ts). */
  toolLimits?: Partial<ToolLoopLimits>;
}

const addStats = (a: GenerationStats, b: GenerationStats): GenerationStats => {
  const completionTokens = a.completionTokens + b.completionTokens;
  // Tokens per second over both generations: each one's decoding time from its own rate.
  const seconds = (s: GenerationStats) => (s.tokensPerSecond > 0 ? s.completionTokens / s.tokensPerSecond : 0);
  const total = seconds(a) + seconds(b);
  return { promptTokens: a.promptTokens + b.promptTokens, completionTokens, totalTokens: a.totalTokens + b.totalTokens, tokensPerSecond: total > 0 ? completionTokens / total : 0 };
};

export class Conversation {
  private readonly messages: ChatMessage[];
  private readonly functions = new Map<string, LeapFunction>();
  private readonly mcpServers = new Map<string, RegisteredMcpServer>();
  private generating = false;

  constructor(private readonly backend: ConversationBackend, history: Array<ChatMessage | PlainChatMessage> = [], functions: Array<LeapFunction | LeapFunctionInit> = []) {
    this.messages = history.map((message) => ChatMessage.from(message));
    for (const fn of functions) this.registerFunction(fn);
  }

  /** The messages so far (a copy): the system prompt, then each exchange once it completed. */
  get history(): ChatMessage[] {
    return [...this.messages];
  }

  /** The functions registered so far. */
  get registeredFunctions(): LeapFunction[] {
    return [...this.functions.values()];
  }

  /** Lets the model call `fn`; a function of the same name is replaced. Throws InvalidFunctionError for a bad definition. */
  registerFunction(fn: LeapFunction | LeapFunctionInit): void {
    const definition = toLeapFunction(fn);
    this.functions.set(definition.name, definition);
  }

  /** The tools of the registered MCP servers, by the name the model calls them. */
  private get mcpTools(): Map<string, { server: string; tool: ServerTool }> {
    const tools = new Map<string, { server: string; tool: ServerTool }>();
    for (const server of this.mcpServers.values()) for (const tool of server.tools) tools.set(tool.name, { server: server.name, tool });
    return tools;
  }

  /**
   * Starts an MCP server, described as an mcp.json entry (`{ command, args, env, cwd }` to spawn it over
   * stdio, or `{ url, headers }` for Streamable HTTP), and lets the model call its tools: generateResponse
   * runs those calls itself (McpToolResult) and lets the model continue, within bounded rounds. A tool
   * whose name a function or another server's tool has is shown as NAME_tool. Resolves to the tool names
   * the model sees; throws McpServerError for a bad name or entry, or a server that cannot start or list
   * its tools. Call close()
   * to end the sessions (a spawned server keeps running until then).
   */
  async registerMcpServer(name: string, server: McpServerInit, options: McpServerOptions = {}): Promise<string[]> {
    await this.mcpServers.get(name)?.close();
    this.mcpServers.delete(name);
    const taken = [...this.functions.keys(), ...this.mcpTools.keys()];
    // Loaded on first use, and through package.json's imports: a browser bundle gets a stand-in that refuses.
    const { RegisteredMcpServer } = await import("#mcp-server");
    const registered = await RegisteredMcpServer.open(name, server, options, taken);
    this.mcpServers.set(name, registered);
    return registered.tools.map((tool) => tool.name);
  }

  /** Ends the sessions of the registered MCP servers and forgets them. */
  async close(): Promise<void> {
    const servers = [...this.mcpServers.values()];
    this.mcpServers.clear();
    await Promise.all(servers.map((server) => server.close()));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Adds `message` (if given) and streams the model's reply. Without a message, the model continues
   * from the history as it is (for instance after a tool message). The user message and the reply join
   * the history once the reply is complete. Failures arrive as MessageResponse.Error; the stream never throws.
   */
  async *generateResponse(message?: ChatMessage | PlainChatMessage | string, optionsInit?: GenerationOptions | GenerationOptionsInit, extras: GenerateResponseExtras = {}): AsyncGenerator<MessageResponse> {
    if (this.generating) {
      yield new GenerationError("Cannot generate: this conversation is already generating a response");
      return;
    }
    this.generating = true;
    const controller = new AbortController();
    const onAbort = () => controller.abort(extras.signal?.reason);
    extras.signal?.addEventListener("abort", onAbort);
    try {
      let added: ChatMessage | undefined;
      let options: GenerationOptions;
      try {
        added = message === undefined ? undefined : typeof message === "string" ? ChatMessage.text("user", message) : ChatMessage.from(message);
        if (!added && this.messages.length === 0) throw new TypeError("Cannot generate: the conversation is empty and no message was given");
        options = GenerationOptions.from(optionsInit);
      } catch (error) {
        yield new GenerationError((error as Error).message, error);
        return;
      }
      const limits = { ...DEFAULT_TOOL_LOOP_LIMITS, ...extras.toolLimits };
      const mcpTools = this.mcpTools;
      const budget = new OutputBudget(limits);
      // This response's messages after the user's: each round's calls and their results, then the answer.
      const turn: ChatMessage[] = [];
      let stats: GenerationStats | undefined;
      for (let round = 0; ; round++) {
        const request: GenerationRequest = {
          messages: [...this.messages, ...(added ? [added] : []), ...turn],
          functions: this.registeredFunctions, mcpTools: [...mcpTools.values()].map(({ tool }) => tool.definition),
          options: round === 0 ? options : roundOptions(options, round >= limits.maxRounds, stats?.completionTokens ?? 0), signal: controller.signal,
        };
        let complete: Complete | undefined;
        for await (const response of this.backendResponses(request, controller, extras.signal)) {
          if (response instanceof GenerationError) {
            yield response;
            return;
          }
          if (response instanceof Complete) {
            complete = response;
            break;
          }
          if (response instanceof FunctionCalls) {
            // The program runs its own functions; the MCP calls run below.
            const own = response.functionCalls.filter((call) => !mcpTools.has(call.name));
            if (own.length > 0) yield new FunctionCalls(own);
            continue;
          }
          yield response;
        }
        if (!complete) return;
        stats = stats ? addStats(stats, complete.stats) : complete.stats;
        const calls = complete.fullMessage.functionCalls ?? [];
        const mcpCalls = calls.filter((call) => mcpTools.has(call.name));
        let finishReason = complete.finishReason;
        if (mcpCalls.length > 0) {
          turn.push(complete.fullMessage);
          for (const [index, call] of mcpCalls.entries()) {
            const { server, tool } = mcpTools.get(call.name)!;
            const outcome = index < limits.maxCallsPerRound
              ? await runMcpCall(tool, call.arguments, budget, controller.signal)
              : limitFailure(`Not run: at most ${limits.maxCallsPerRound} tool calls are run per turn`);
            const text = resultText(outcome);
            yield new McpToolResult(server, call, text, !outcome.ok);
            turn.push(new ChatMessage({ role: "tool", content: text, ...(call.id ? { toolCallId: call.id } : {}) }));
          }
          if (controller.signal.aborted) {
            yield new GenerationError("Generation was aborted", extras.signal?.reason);
            return;
          }
          const maxTokens = options.maxTokens;
          const spent = maxTokens !== undefined && stats.completionTokens >= maxTokens;
          // The model goes on with the results, unless calls of the program's own functions wait or the tokens are spent.
          if (calls.length === mcpCalls.length && !spent) continue;
          if (spent && calls.length === mcpCalls.length) finishReason = "length";
        }
        const last = mcpCalls.length > 0 ? [] : [complete.fullMessage];
        if (added) this.messages.push(added);
        this.messages.push(...turn, ...last);
        yield new Complete(complete.fullMessage, finishReason, stats);
        return;
      }
    } finally {
      extras.signal?.removeEventListener("abort", onAbort);
      controller.abort();
      this.generating = false;
    }
  }

  /** One generation of the backend, its failures as GenerationError; stops the backend when the reader stops. */
  private async *backendResponses(request: GenerationRequest, controller: AbortController, signal: AbortSignal | undefined): AsyncGenerator<MessageResponse> {
    const replies = this.backend.generate(request);
    try {
      for (;;) {
        let next: IteratorResult<MessageResponse>;
        try {
          next = await replies.next();
        } catch (error) {
          yield new GenerationError(controller.signal.aborted ? "Generation was aborted" : (error as Error).message, error);
          return;
        }
        if (next.done) return;
        if (signal?.aborted) {
          yield new GenerationError("Generation was aborted", signal.reason);
          return;
        }
        yield next.value;
        if (next.value instanceof Complete || next.value instanceof GenerationError) return;
      }
    } finally {
      await replies.return(undefined);
    }
  }
}

/**
 * A later round's options: a forced choice holds for the first round only, the last round may call
 * nothing, and maxTokens bounds the whole response (the tokens spent so far are taken off).
 */
function roundOptions(options: GenerationOptions, last: boolean, spentTokens: number): GenerationOptions {
  return new GenerationOptions({
    ...options, toolChoice: last || options.toolChoice === "none" ? "none" : "auto",
    ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens - spentTokens } : {}),
  });
}

async function runMcpCall(tool: ServerTool, args: Record<string, unknown>, budget: OutputBudget, signal: AbortSignal): Promise<ServerToolOutcome> {
  try {
    return budget.bound(await tool.run(args, signal));
  } catch (error) {
    return { ok: false, failure: { type: "mcp_protocol_error", message: `Cannot run "${tool.name}": ${(error as Error).message}` } };
  }
}
