// GET /v1/usage (llamux's own, on every profile): what named keys have used and what they may use.
// A key reads its own entry; a key with the admin scope (and a plain --api-key key) reads every named
// key's, or one with ?key=NAME. Another key's name reads as unknown to a key without admin (404).
//   -> {object: "list", data: [{key, requests, prompt_tokens, completion_tokens, cached_tokens, rate_limited,
//       day (UTC), tokens_today, last_minute: {requests, tokens}, last_used_at, revoked,
//       limits: {scopes, models, rpm, tpm, tokens_per_day, max_parallel, weight, expires_at} | null}]}
// A server without named keys answers an empty list.
import type { Context } from "hono";
import type { KeyAccess } from "../keys/key-access.ts";
import type { KeyEntry } from "../keys/key-file.ts";
import { notFound } from "./api-error.ts";
import { keyRequest } from "./middleware/api-key.ts";
import type { Route } from "./route-table.ts";

function limitsOf(entry: KeyEntry) {
  return {
    scopes: entry.scopes, models: entry.models ?? null, rpm: entry.rpm ?? null, tpm: entry.tpm ?? null,
    tokens_per_day: entry.tokens_per_day ?? null, max_parallel: entry.max_parallel ?? null, weight: entry.weight ?? 1,
    expires_at: entry.expires_at ?? null,
  };
}

export function usageEntry(access: KeyAccess, owner: string) {
  const usage = access.usage.get(owner);
  const entry = access.ring?.entryNamed(owner);
  return {
    key: owner, requests: usage.requests, prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens,
    cached_tokens: usage.cachedTokens, rate_limited: usage.rateLimited, day: usage.day, tokens_today: usage.dayTokens,
    last_minute: access.usage.lastMinute(owner), last_used_at: usage.lastUsedAt ?? null, revoked: entry === undefined,
    limits: entry ? limitsOf(entry) : null,
  };
}

/** Every named key, present or with usage left from before it was revoked, by name. */
function namedOwners(access: KeyAccess): string[] {
  return [...new Set([...(access.ring?.entries().map((entry) => entry.name) ?? []), ...access.usage.owners()])].sort();
}

export function usageRoutes(access: KeyAccess | undefined): Route[] {
  const handler = (c: Context) => {
    const grant = keyRequest(c)?.grant;
    if (!access || !grant) return c.json({ object: "list", data: [] });
    const asked = c.req.query("key");
    const readable = grant.scopes.has("admin") ? namedOwners(access) : grant.named ? [grant.owner] : [];
    const owners = asked === undefined ? readable : readable.filter((owner) => owner === asked);
    if (asked !== undefined && owners.length === 0) throw notFound(`No API key "${asked}"`, "key");
    return c.json({ object: "list", data: owners.map((owner) => usageEntry(access, owner)) });
  };
  return [{ methods: ["GET"], path: "/v1/usage", needs: "key", handler }];
}
