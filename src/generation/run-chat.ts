// The one orchestrator of a chat (or raw completion) request, shared by every API, both SDKs and the CLI:
// load the model with the request's load options, plan how the reply is read and constrained (tools,
// grammar, reasoning), render and fit the prompt, settle the reply's limit, and start the choices. It
// knows nothing of HTTP: what cannot fit comes back as a ContextLimitError, a bad parameter as an
// OptionError, and each API words them its own way.
import { OptionError } from "../options/check-value.ts";
import { engineSettings, type EngineSettings } from "../options/engine-settings.ts";
import type { GenerateRequest } from "../engine/types.ts";
import { startChat, type ChatChoice, type RenderedPrompt } from "./chat.ts";
import { planChatOutput, type ChatOutputPlan } from "./chat-output.ts";
import { ContextLimitError, type ChatSpec, type ContextCeiling, type ModelHandle, type ReplyLimit, type RunOptions } from "./chat-spec.ts";
import type { EngineHandle } from "../engine/engine-handle.ts";
import { withReasoningBudget } from "./reasoning-budget.ts";
import { checkPromptFits, renderPrompt } from "./render-prompt.ts";

export interface RenderedChat {
  engine: EngineHandle;
  prompt: RenderedPrompt;
  plan: ChatOutputPlan;
  /** The parameters as the engine takes them (the seed drawn). */
  settings: EngineSettings;
}

export interface RunningChat extends RenderedChat {
  /** The reply's limit in tokens; undefined: until the context is full. */
  maxTokens: number | undefined;
  choices: ChatChoice[];
}

/** Ollama's num_keep default, for a prompt cut without one. */
const DEFAULT_NUM_KEEP = 4;

/** Loads the model, plans the output and renders the prompt: what a reply and a token count both need. */
export async function renderChat(model: ModelHandle, spec: ChatSpec, run: RunOptions = {}): Promise<RenderedChat> {
  const settings = engineSettings(spec.options);
  const engine = await model.engine(settings.load);
  const plan = await planChatOutput(spec.output ?? {}, engine.info.chatTemplate, run.toolCallParser);
  const prompt = await renderPrompt(engine, spec.prompt, plan, { contextLength: engine.info.contextPerSequence, numKeep: settings.numKeep ?? DEFAULT_NUM_KEEP });
  return { engine, prompt, plan, settings };
}

/** The reply's limit once the prompt's length is known; throws ContextLimitError when the request cannot fit. */
export function replyTokens(limit: ReplyLimit, fromOptions: number | undefined, promptTokens: number, contextLength: number): number | undefined {
  const requested = limit.maxTokens === "unlimited" ? undefined : limit.maxTokens ?? fromOptions ?? limit.defaultMaxTokens;
  const room = contextLength - promptTokens;
  switch (limit.overflow) {
    case "clamp":
      return requested === undefined ? room : Math.min(requested, room);
    case "refuse":
      if (requested !== undefined && requested > room) throw new ContextLimitError("reply", promptTokens, contextLength, requested);
      return requested;
    case "allow":
      return requested;
  }
}

/** Growths of one request at most: each reloads the model, whose context the host rounds up. */
const MAX_GROWTHS = 3;

/** The tokens a request that did not fit needs: its prompt and one more, or its prompt and its reply's limit. */
const neededTokens = (error: ContextLimitError) => error.promptTokens + (error.kind === "prompt" ? 1 : error.maxTokens ?? 1);

/** A request that did not fit even after growing, told against the most context the host could give it. */
function atCeiling(error: ContextLimitError, ceiling: ContextCeiling | undefined): ContextLimitError {
  // (a ceiling that would have held it is an estimate the growth proved wrong: the error stays as it is)
  if (!ceiling || ceiling.tokens < error.contextLength || ceiling.tokens >= neededTokens(error)) return error;
  return new ContextLimitError(error.kind, error.promptTokens, ceiling.tokens, error.maxTokens, ceiling);
}

/**
 * The rendered request and its reply's limit, on an engine whose context holds it: a request that does not
 * fit grows the model's context where its host allows, before any message is dropped or prompt cut.
 */
async function fittedChat(model: ModelHandle, spec: ChatSpec, run: RunOptions): Promise<RenderedChat & { maxTokens: number | undefined }> {
  const fitsOrThrows = async (request: ChatSpec) => {
    const rendered = await renderChat(model, request, run);
    const contextLength = rendered.engine.info.contextPerSequence;
    checkPromptFits(rendered.prompt, contextLength);
    return { ...rendered, maxTokens: replyTokens(request.limit, rendered.settings.generation.maxTokens, rendered.prompt.tokens.length, contextLength) };
  };
  if (!model.grow) return fitsOrThrows(spec);
  // Whole first: a chat that only fits with messages dropped (or a prompt cut) grows the context instead.
  const whole: ChatSpec = { ...spec, prompt: { ...spec.prompt, overflow: "refuse" } };
  for (let growths = 0; ; growths++) {
    try {
      return await fitsOrThrows(whole);
    } catch (error) {
      if (!(error instanceof ContextLimitError)) throw error;
      if (growths >= MAX_GROWTHS || !await model.grow(neededTokens(error))) {
        if (spec.prompt.overflow === undefined || spec.prompt.overflow === "refuse") throw atCeiling(error, model.ceiling?.());
        return fitsOrThrows(spec);
      }
    }
  }
}

export async function runChat(model: ModelHandle, spec: ChatSpec, run: RunOptions = {}): Promise<RunningChat> {
  const rendered = await fittedChat(model, spec, run);
  const { engine, prompt, plan, settings, maxTokens } = rendered;
  const { minTokens } = settings.generation;
  if (minTokens !== undefined && maxTokens !== undefined && minTokens > maxTokens) {
    throw new OptionError("min_tokens", `at most max_tokens (${maxTokens})`, `min_tokens (${minTokens}) must not exceed max_tokens (${maxTokens})`);
  }
  const request: Omit<GenerateRequest, "id" | "prompt"> = {
    ...settings.generation,
    sampling: { ...settings.sampling, ...(plan.grammar !== undefined ? { grammar: plan.grammar } : {}) },
  };
  delete request.maxTokens;
  if (maxTokens !== undefined) request.maxTokens = maxTokens;
  if (spec.logprobs !== undefined) request.logprobs = spec.logprobs;
  if (spec.promptProgress) request.promptProgress = true;
  // The host's facts about the caller win over what the request itself says (it cannot name another owner).
  const schedule = { ...spec.schedule, ...settings.schedule, ...run.schedule };
  if (Object.keys(schedule).length) request.schedule = schedule;
  // Call markers are special tokens: the reader needs their text (as vLLM keeps them with tools).
  if (spec.keepSpecialTokens ?? plan.readsToolCalls) request.renderSpecialTokens = true;
  const runner = spec.reasoningBudget !== undefined ? withReasoningBudget(engine, spec.reasoningBudget, prompt.text) : engine;
  const choices = await startChat(runner, prompt, request, {
    n: spec.n ?? 1, parser: () => plan.parser(prompt.text),
    ...(run.signal ? { signal: run.signal } : {}), ...(run.onDone ? { onDone: run.onDone } : {}),
  });
  return { engine, prompt, plan, settings, maxTokens, choices };
}
