// The timing fields of Ollama's final chunk: integer nanoseconds, and omitted when zero (Go's
// omitempty), so a load-only answer carries none of them.
import type { RequestUsage } from "../../engine/types.ts";

/** When the request arrived and when its model was ready (performance.now() milliseconds). */
export interface RequestTiming {
  arrived: number;
  loaded: number;
}

const nanoseconds = (ms: number) => Math.max(0, Math.round(ms * 1e6));

export function metricsFields(timing: RequestTiming, usage?: RequestUsage): Record<string, number> {
  const fields: Record<string, number> = {
    total_duration: nanoseconds(performance.now() - timing.arrived),
    // Ollama counts the wait for a runner (queue included) as load time.
    load_duration: nanoseconds(timing.loaded - timing.arrived),
    prompt_eval_count: usage?.promptTokens ?? 0,
    prompt_eval_duration: nanoseconds(usage?.promptMs ?? 0),
    eval_count: usage?.completionTokens ?? 0,
    eval_duration: nanoseconds(usage?.decodeMs ?? 0),
  };
  for (const [name, value] of Object.entries(fields)) if (value === 0) delete fields[name];
  return fields;
}
