// A named key's limits against what it has used: the first one reached, as a 429 with the seconds until
// a request would pass. Requests per minute count the request being admitted; token limits are reached
// once the tokens already used meet them (a request's own tokens are known only when it ends, so the
// request that crosses a token limit completes and the next one waits).
import type { KeyGrant } from "./key-grant.ts";
import { KeyRefusal } from "./key-refusal.ts";
import { secondsToNextUtcDay, type UsageBook } from "./usage-book.ts";

function reached(owner: string, what: string, limit: number, used: number, retryAfterSeconds: number, limitName: KeyRefusal["detail"]["limit"]): KeyRefusal {
  return new KeyRefusal(429, `Rate limit reached for API key "${owner}" on ${what}: limit ${limit}, used ${used}. Try again in ${retryAfterSeconds} s.`, {
    limit: limitName!, retryAfterSeconds,
  });
}

export function limitReached(grant: KeyGrant, book: UsageBook): KeyRefusal | undefined {
  const { owner, limits } = grant;
  const minute = book.lastMinute(owner);
  if (limits.rpm !== undefined && minute.requests >= limits.rpm) {
    return reached(owner, "requests per minute (rpm)", limits.rpm, minute.requests, book.minuteWait(owner, "requests", limits.rpm), "rpm");
  }
  if (limits.tpm !== undefined && minute.tokens >= limits.tpm) {
    return reached(owner, "tokens per minute (tpm)", limits.tpm, minute.tokens, book.minuteWait(owner, "tokens", limits.tpm), "tpm");
  }
  const today = book.get(owner).dayTokens;
  if (limits.tokensPerDay !== undefined && today >= limits.tokensPerDay) {
    return reached(owner, "tokens per day (UTC)", limits.tokensPerDay, today, secondsToNextUtcDay(book.now()), "tokens_per_day");
  }
  return undefined;
}
