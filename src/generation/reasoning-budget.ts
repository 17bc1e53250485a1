// A budget on a reply's reasoning (Anthropic's thinking.budget_tokens): an engine handle whose
// sequences, once `budget` tokens have gone by inside `<think>` without its close, are stopped, and then
// continued from the prompt plus the reasoning so far plus `</think>`, so the answer follows. The
// continuation reuses the cached prefix, so the cut costs one short prompt step. Callers see one stream:
// the reasoning tokens, a token event carrying the close tag, then the answer's tokens, and one `done`
// whose usage covers both parts.
import { promptOpensReasoning, THINK_CLOSE, THINK_OPEN } from "../chat/reasoning.ts";
import type { EngineEvent, GenerateRequest, RequestUsage } from "../engine/types.ts";
import type { EngineHandle } from "../engine/engine-handle.ts";

/** What the model is writing, read from its raw text. */
type Phase = "start" | "reasoning" | "answer";

const CLOSE_TEXT = `${THINK_CLOSE}\n\n`;

export function withReasoningBudget(engine: EngineHandle, budget: number, promptText: string): EngineHandle {
  if (!Number.isInteger(budget) || budget < 1) throw new RangeError(`Cannot budget reasoning to ${budget} tokens: expected a positive integer`);
  const startsInside = promptOpensReasoning(promptText);
  return {
    info: engine.info,
    tokenize: (text, options) => engine.tokenize(text, options),
    detokenize: (tokens) => engine.detokenize(tokens),
    countPromptTokens: (prompt) => engine.countPromptTokens(prompt),
    generate: (request, signal) => budgeted(engine, request, budget, startsInside, signal),
    speak: (request, options) => engine.speak(request, options),
  };
}

async function* budgeted(
  engine: EngineHandle, request: Omit<GenerateRequest, "id">, budget: number, startsInside: boolean, signal?: AbortSignal,
): AsyncGenerator<EngineEvent> {
  let phase: Phase = startsInside ? "reasoning" : "start";
  let text = "";
  let reasoningTokens = 0;
  const tokens: number[] = [];
  const limit = request.maxTokens !== undefined && request.maxTokens >= 0 ? request.maxTokens : Infinity;
  const first = engine.generate(request, signal);
  for await (const event of first) {
    yield event;
    if (event.type === "progress") continue;
    if (event.type !== "token") return;
    tokens.push(event.token);
    text += event.text;
    if (phase === "start") {
      const trimmed = text.trimStart();
      if (trimmed.startsWith(THINK_OPEN)) phase = "reasoning";
      else if (trimmed && !THINK_OPEN.startsWith(trimmed)) phase = "answer";
    }
    if (phase === "reasoning") {
      if (text.includes(THINK_CLOSE)) phase = "answer";
      // a budget at or past the reply's limit (interleaved thinking allows one) leaves the limit to end it
      else if (++reasoningTokens >= budget && tokens.length < limit) break;
    }
  }
  if (phase !== "reasoning") return;
  // Out of budget: leaving the loop cancelled the first sequence; close the reasoning and go on.
  const closeTokens = await engine.tokenize(CLOSE_TEXT, { addSpecial: false, parseSpecial: true });
  const promptLength = typeof request.prompt === "string" ? 0 : request.prompt.length;
  if (tokens.length + closeTokens.length > limit) {
    // no room left for the close tag: the reply ends at its limit, still reasoning
    yield { type: "done", id: "", finishReason: "length", usage: emptyUsage(promptLength, tokens.length) };
    return;
  }
  yield { type: "token", id: "", token: closeTokens[0] ?? -1, text: CLOSE_TEXT };
  const used = tokens.length + closeTokens.length;
  const left = Number.isFinite(limit) ? limit - used : undefined;
  if (left !== undefined && left <= 0) {
    yield { type: "done", id: "", finishReason: "length", usage: emptyUsage(promptLength, used) };
    return;
  }
  const prompt = typeof request.prompt === "string"
    ? request.prompt + (await engine.detokenize(tokens)) + CLOSE_TEXT
    : [...request.prompt, ...tokens, ...closeTokens];
  const rest = engine.generate({ ...request, prompt, ...(left !== undefined ? { maxTokens: left } : {}) }, signal);
  for await (const event of rest) {
    // the continuation's prompt is this request's: its progress was reported already
    if (event.type === "progress") continue;
    if (event.type !== "done") {
      yield event;
      continue;
    }
    // One request to the caller: the continuation's prompt was the original prompt plus this reply so far.
    const usage = event.usage;
    yield {
      ...event,
      usage: {
        ...usage,
        promptTokens: Math.max(0, usage.promptTokens - used),
        cachedPromptTokens: Math.min(usage.cachedPromptTokens, Math.max(0, usage.promptTokens - used)),
        completionTokens: usage.completionTokens + used,
      },
    };
  }
}

function emptyUsage(promptTokens: number, completionTokens: number): RequestUsage {
  return { promptTokens, cachedPromptTokens: 0, completionTokens, timeToFirstTokenMs: 0, promptMs: 0, decodeMs: 0, queueMs: 0 };
}
