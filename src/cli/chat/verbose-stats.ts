// `--verbose` / `/set verbose`: the timing lines `ollama run --verbose` prints after an answer.
import type { ChatStats } from "./backend.ts";

function duration(ms: number): string {
  if (ms >= 1000) return `${(ms / 1000).toFixed(6).replace(/\.?0+$/, "")}s`;
  if (ms >= 1) return `${ms.toFixed(6).replace(/\.?0+$/, "")}ms`;
  return `${(ms * 1000).toFixed(3).replace(/\.?0+$/, "")}µs`;
}

const rate = (tokens: number, ms: number) => (ms > 0 ? `${(tokens / (ms / 1000)).toFixed(2)} tokens/s` : "n/a");

export function formatStats(stats: ChatStats): string {
  return [
    `total duration:       ${duration(stats.totalMs)}`,
    `load duration:        ${duration(stats.loadMs)}`,
    `prompt eval count:    ${stats.promptTokens} token(s)`,
    `prompt eval duration: ${duration(stats.promptMs)}`,
    `prompt eval rate:     ${rate(stats.promptTokens, stats.promptMs)}`,
    `eval count:           ${stats.evalTokens} token(s)`,
    `eval duration:        ${duration(stats.evalMs)}`,
    `eval rate:            ${rate(stats.evalTokens, stats.evalMs)}`,
  ].join("\n");
}
