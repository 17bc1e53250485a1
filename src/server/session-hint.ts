// Which conversation a request continues, as the agents and OpenAI's clients say it. The engine takes it as
// a fact (RequestSchedule.session): which cached states to keep and where a session's next turn is looked
// up. The first of these a request carries wins:
//
//   X-Claude-Code-Session-Id header     Claude Code
//   session-id (or session_id) header    Codex (0.171 sends session-id; earlier releases session_id)
//   prompt_cache_key body field          OpenAI's chat completions and Responses (Codex sends it too)
//   user body field                      OpenAI's chat completions and Responses (a person, not a session)
//   metadata.user_id body field          Anthropic's Messages (Claude Code puts its session id inside)
import { createHash } from "node:crypto";
import type { RequestSchedule } from "../engine/types.ts";
import { logger } from "../log.ts";

const log = logger("http");

/** The body fields a hint may come from; each API has some of them. */
export interface SessionHintFields {
  prompt_cache_key?: string | null | undefined;
  user?: string | null | undefined;
  metadata?: Record<string, unknown> | null | undefined;
}

const HEADERS = ["x-claude-code-session-id", "session-id", "session_id"] as const;

/** Longer hints are kept as their digest: a key only needs to tell sessions apart. */
export const MAX_SESSION_HINT_LENGTH = 128;

function bounded(hint: string): string {
  return hint.length <= MAX_SESSION_HINT_LENGTH ? hint : `sha256:${createHash("sha256").update(hint).digest("hex")}`;
}

/** The request's session hint and where it came from, or undefined when it carries none. */
export function sessionHint(headers: Headers, body: SessionHintFields = {}): { session: string; from: string } | undefined {
  const candidates: Array<[string, unknown]> = [
    ...HEADERS.map((name): [string, unknown] => [`${name} header`, headers.get(name)]),
    ["prompt_cache_key", body.prompt_cache_key],
    ["user", body.user],
    ["metadata.user_id", body.metadata?.user_id],
  ];
  for (const [from, value] of candidates) {
    if (typeof value === "string" && value.trim() !== "") return { session: bounded(value), from };
  }
  return undefined;
}

/** The scheduling facts a route hands the orchestrator (ChatSpec.schedule), the hint logged at debug level. */
export function requestSchedule(headers: Headers, body: SessionHintFields = {}): { schedule?: RequestSchedule } {
  const hint = sessionHint(headers, body);
  if (!hint) return {};
  log.debug(`session hint ${JSON.stringify(hint.session)} from ${hint.from}`);
  return { schedule: { session: hint.session } };
}
