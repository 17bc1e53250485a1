// The server side of one chat request, shared by every chat-shaped route (chat completions, the
// Responses API, Anthropic's Messages API): load the model, plan the output (tools, grammar, reasoning),
// render and tokenize the prompt, fit it to the context, and start its choices. Each route translates its
// body into a ChatRequestSpec before and renders the choices' events after; nothing else differs.
import type { EngineOptions, GenerateRequest } from "../engine/types.ts";
import { renderChatPrompt, startChat, type ChatChoice, type RenderedPrompt } from "../generation/chat.ts";
import { planChatOutput, type ChatOutputPlan, type ChatOutputRequest } from "../generation/chat-output.ts";
import type { DoneEvent } from "../generation/choices.ts";
import type { EngineHandle } from "../generation/engine-handle.ts";
import { withReasoningBudget } from "../generation/reasoning-budget.ts";
import type { ChatMessage } from "../chat/types.ts";
import { badRequest } from "./api-error.ts";
import type { ServerDeps } from "./deps.ts";
import type { KeepAliveRequest, ServedModel } from "./model-service.ts";
import { withModelStops, type ModelDefaults } from "./openai/ollama-options.ts";
import { limitGrowingContext } from "./context-growth.ts";

/** What decides a request's prompt. */
export interface ChatPromptSpec {
  model: ServedModel;
  defaults: ModelDefaults;
  /** Load options the request sets (profile a's num_ctx) over the model's own. */
  load?: Partial<EngineOptions>;
  keepAlive?: KeepAliveRequest;
  /** The conversation, images already read. */
  messages: ChatMessage[];
  output: ChatOutputRequest;
  templateVariables?: Record<string, unknown>;
  addGenerationPrompt?: boolean;
}

export interface ChatRequestSpec extends ChatPromptSpec {
  /**
   * The reply's token limit once the prompt's length is known: it checks that the prompt fits (throwing
   * the route's own error) and returns the limit, undefined for "until the context is full".
   */
  limit(promptTokens: number, context: number): number | undefined;
  /** Sampler settings, already merged (profile, model, request); the plan's grammar is added here. */
  sampling: GenerateRequest["sampling"];
  /** Stop strings and the other engine fields the route sets; the model's stops fill in when it sets none. */
  fields: Omit<GenerateRequest, "id" | "prompt" | "sampling" | "maxTokens">;
  /** Keep special tokens in the text the tool-call parser reads (default true when calls are read). */
  keepSpecialTokens?: boolean;
  /** At most this many tokens of reasoning; then the reasoning is closed and the answer follows. */
  reasoningBudget?: number;
  n?: number;
  signal?: AbortSignal;
  onDone?: (event: DoneEvent) => void;
}

export interface RenderedChat {
  engine: EngineHandle;
  prompt: RenderedPrompt;
  plan: ChatOutputPlan;
}

export interface StartedChat extends RenderedChat {
  maxTokens: number | undefined;
  choices: ChatChoice[];
}

/** Loads the model, plans the output and renders the prompt (what a token count needs too). */
export async function renderChatRequest(deps: ServerDeps, spec: ChatPromptSpec): Promise<RenderedChat> {
  const { model } = spec;
  if (deps.models.embeds(model)) throw badRequest(`Model "${model.id}" is an embedding model and does not support chat`, "model");
  const engine = await deps.models.engine(model, { ...spec.defaults.load, ...spec.load }, spec.keepAlive);
  const plan = planChatOutput(spec.output, engine.info.chatTemplate, deps.toolCallParser);
  const prompt = await renderChatPrompt(engine, {
    messages: spec.messages,
    tools: plan.tools,
    ...(plan.syntax ? { toolCallSyntax: plan.syntax } : {}),
    addGenerationPrompt: spec.addGenerationPrompt ?? true,
    ...(spec.templateVariables ? { templateVariables: spec.templateVariables } : {}),
  });
  return { engine, plan, prompt };
}

export async function startChatRequest(deps: ServerDeps, spec: ChatRequestSpec): Promise<StartedChat> {
  let { engine, plan, prompt } = await renderChatRequest(deps, spec);
  const maxTokens = await limitGrowingContext(deps, spec, () => ({ tokens: prompt.tokens.length, context: engine.info.contextPerSequence }),
    async () => ({ engine, plan, prompt } = await renderChatRequest(deps, spec)));
  const fields: Omit<GenerateRequest, "id" | "prompt" | "sampling"> = withModelStops({ ...spec.fields }, spec.defaults);
  if (maxTokens !== undefined) fields.maxTokens = maxTokens;
  // Call markers are special tokens: keep them in the text the parser reads (as vLLM does with tools).
  if (plan.readsToolCalls && (spec.keepSpecialTokens ?? true)) fields.renderSpecialTokens = true;
  const sampling = { ...spec.sampling, ...(plan.grammar !== undefined ? { grammar: plan.grammar } : {}) };
  const runner = spec.reasoningBudget !== undefined ? withReasoningBudget(engine, spec.reasoningBudget, prompt.text) : engine;
  const choices = await startChat(runner, prompt, { sampling, ...fields }, {
    n: spec.n ?? 1, parser: () => plan.parser(prompt.text),
    ...(spec.signal ? { signal: spec.signal } : {}), ...(spec.onDone ? { onDone: spec.onDone } : {}),
  });
  return { engine, prompt, plan, maxTokens, choices };
}
