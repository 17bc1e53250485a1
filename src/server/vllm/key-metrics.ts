// Per-key counters on /metrics, labelled by the named key's name (never its secret): requests, prompt,
// completion and cached tokens, and requests refused for a limit. They are read from the usage book on each
// scrape, so they carry on across restarts as the book does.
import { Counter, type Registry } from "prom-client";
import type { KeyUsage, UsageBook } from "../../keys/usage-book.ts";

const COUNTERS: Array<[name: string, help: string, read: (usage: KeyUsage) => number]> = [
  ["llamux:key_requests_total", "Requests admitted under each named API key.", (u) => u.requests],
  ["llamux:key_prompt_tokens_total", "Prompt tokens of each named API key's requests.", (u) => u.promptTokens],
  ["llamux:key_completion_tokens_total", "Completion tokens of each named API key's requests.", (u) => u.completionTokens],
  ["llamux:key_cached_tokens_total", "Prompt tokens of each named API key's requests read from a cache instead of processed.", (u) => u.cachedTokens],
  ["llamux:key_rate_limited_total", "Requests of each named API key refused with 429 for a limit.", (u) => u.rateLimited],
];

/** Registers the counters; the returned function sets them from the book (call it before rendering). */
export function keyMetrics(registry: Registry, usage: UsageBook): () => void {
  const counters = COUNTERS.map(([name, help, read]) => ({ counter: new Counter<"key">({ name, help, labelNames: ["key"], registers: [registry] }), read }));
  return function sampleKeys() {
    const owners = usage.owners();
    for (const { counter, read } of counters) {
      counter.reset();
      for (const owner of owners) counter.inc({ key: owner }, read(usage.get(owner)));
    }
  };
}
