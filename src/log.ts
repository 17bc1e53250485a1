// A small leveled logger writing to stderr. The level comes from LLAMUX_LOG_LEVEL (error|warn|info|debug),
// info by default; each line names its source so llama.cpp's own messages stay distinguishable. A message
// is one line: its control characters are escaped (it may quote what a server or a client sent).
import { printable } from "./printable.ts";

export type LogLevel = "error" | "warn" | "info" | "debug";
const order: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

function currentLevel(): LogLevel {
  const value = process.env.LLAMUX_LOG_LEVEL?.toLowerCase();
  return value && value in order ? (value as LogLevel) : "info";
}

export function logEnabled(level: LogLevel): boolean {
  return order[level] <= order[currentLevel()];
}

export function log(level: LogLevel, source: string, message: string): void {
  if (!logEnabled(level)) return;
  const time = new Date().toISOString().slice(11, 23);
  process.stderr.write(`${time} ${level.toUpperCase().padEnd(5)} [${source}] ${printable(message)}\n`);
}

export function logger(source: string) {
  return {
    error: (message: string) => log("error", source, message),
    warn: (message: string) => log("warn", source, message),
    info: (message: string) => log("info", source, message),
    debug: (message: string) => log("debug", source, message),
  };
}
