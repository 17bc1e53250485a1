// One log line per request: method, path, status, latency and, when the route reported them with
// `c.set("usage", …)`, token counts. A streamed response is logged when its stream ends, so the
// latency and the counts cover the whole generation.
import type { MiddlewareHandler } from "hono";
import { logger } from "../../log.ts";
import { keyOwner } from "./api-key.ts";
import { isStreamedAnswer, observeEnd, type StreamOutcome } from "./stream-end.ts";

/** Token counts of one request (all choices), as a route reports them for the log. */
export interface RequestTokenCounts {
  promptTokens: number;
  completionTokens: number;
}

declare module "hono" {
  interface ContextVariableMap {
    /** Set by generation routes so the request log can show token counts. */
    usage: RequestTokenCounts;
  }
}

export interface RequestLogEntry {
  method: string;
  path: string;
  status: number;
  latencyMs: number;
  usage?: RequestTokenCounts;
  /** Set for streamed responses: how the stream ended. */
  stream?: StreamOutcome;
  /** The API key owner that made the request (keyOwner): "" without keys, or when no key passed. */
  owner: string;
}

export interface RequestLogOptions {
  /** Where lines go; the "http" logger at info level by default. */
  write?: (line: string) => void;
  /** Also given each entry (the web UI's request history). */
  record?: (entry: RequestLogEntry) => void;
}

const streamNotes: Record<StreamOutcome, string> = {
  completed: " stream",
  cancelled: " stream cancelled by client",
  failed: " stream failed",
};

/** `POST /v1/chat/completions 200 812.4 ms stream prompt_tokens=12 completion_tokens=34` */
export function formatRequestLine(entry: Omit<RequestLogEntry, "owner">): string {
  let line = `${entry.method} ${entry.path} ${entry.status} ${entry.latencyMs.toFixed(1)} ms`;
  if (entry.stream) line += streamNotes[entry.stream];
  if (entry.usage) line += ` prompt_tokens=${entry.usage.promptTokens} completion_tokens=${entry.usage.completionTokens}`;
  return line;
}

export function requestLog(options: RequestLogOptions = {}): MiddlewareHandler {
  const httpLog = logger("http");
  const opts = { write: (line: string) => httpLog.info(line), record: () => {}, ...options } satisfies Required<RequestLogOptions>;
  const log = (entry: RequestLogEntry) => {
    opts.write(formatRequestLine(entry));
    opts.record(entry);
  };

  return async function requestLog(c, next) {
    const started = performance.now();
    await next();
    const entry = (stream?: StreamOutcome): RequestLogEntry => {
      const usage = c.get("usage");
      return {
        method: c.req.method, path: c.req.path, status: c.res.status, latencyMs: performance.now() - started, owner: keyOwner(c),
        ...(usage ? { usage } : {}), ...(stream ? { stream } : {}),
      };
    };
    if (isStreamedAnswer(c.res)) {
      c.res = new Response(observeEnd(c.res.body, (outcome) => log(entry(outcome))), c.res);
      return;
    }
    log(entry());
  };
}
