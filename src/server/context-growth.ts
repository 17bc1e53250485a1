// How far a model's context grows for a request that does not fit it (the orchestrator asks, through
// ModelService.growContext, before it refuses a request or drops part of it): to the next power of two at or
// above the tokens the request needs (so a conversation that keeps growing reloads a few times, not at
// every turn), never past the context the model was trained for. Each sequence is given that size, a KV
// stream of its own, as at the default context: in one shared pool, llama.cpp's attention reads every
// cell in use, so a cold prefill beside other sessions' long cached prefixes (coding agents) took about
// three times as long. The engine caps what the sequences share to half the free memory; where that cap
// is below size × --parallel they share one pool of it instead, and one long sequence uses what the idle
// ones leave.
import { kvTokensWithinMemory } from "../engine/context-memory.ts";
import type { ContextCeiling } from "../generation/chat-spec.ts";

/** The smallest context at least this size, for a request of `neededTokens`; undefined when it cannot fit the trained context. */
export function grownContextSize(neededTokens: number, trainedContext: number | undefined): number | undefined {
  if (trainedContext === undefined || neededTokens > trainedContext) return undefined;
  let size = 4096;
  while (size < neededTokens) size *= 2;
  return Math.min(size, trainedContext);
}

/** The context sizes a grown model is loaded with: per sequence, and shared by all of its sequences. */
export interface GrownContext {
  contextPerSequence: number;
  sharedContext: number;
}

export function grownContext(size: number, sharedNow: number, parallel: number): GrownContext {
  return { contextPerSequence: size, sharedContext: Math.max(size * parallel, sharedNow) };
}

/** What decides a model's ceiling: its trained context, whether it grows, and its loaded instances. */
export interface CeilingFacts {
  trainedContext: number | undefined;
  /** Whether requests may grow its context (not under vLLM's --max-model-len). */
  grows: boolean;
  loaded: Array<{ contextPerSequence: number; sharedContext: number; kvBytesPerToken: number }>;
  /** Context per sequence it would be loaded with now, where none is loaded. */
  configured: number | undefined;
  freeBytes: number;
}

/**
 * The most context a request can get: where it grows, its trained context, or less where the memory free
 * for its KV cache holds less (known once an instance is loaded: growing frees that instance's cache
 * first); where it does not grow, the context it has.
 */
export function contextCeiling(facts: CeilingFacts): ContextCeiling {
  const trained = facts.trainedContext;
  const current = Math.max(0, ...facts.loaded.map((l) => l.contextPerSequence));
  const withTrained = trained !== undefined ? { trainedContext: trained } : {};
  if (!facts.grows || trained === undefined) return { tokens: current || facts.configured || trained || 4096, boundBy: "setting", ...withTrained };
  const memory = Math.max(0, ...facts.loaded.map((l) => kvTokensWithinMemory(facts.freeBytes + l.sharedContext * l.kvBytesPerToken, l.kvBytesPerToken)));
  if (facts.loaded.length && memory < trained) return { tokens: Math.max(memory, current), boundBy: "memory", ...withTrained };
  return { tokens: trained, boundBy: "trained", ...withTrained };
}
