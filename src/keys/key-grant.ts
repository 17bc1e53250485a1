// What a request may do once its key is known: the owner name its stored objects and usage go under, its
// scopes, models and limits, and its share of the engine (weight, sequence cap). A plain --api-key key is
// granted everything and counted nowhere; a named key's grant is read from its entry in the keys file,
// afresh on every request, so a change to the file applies to the next request.
import type { KeyEntry } from "./key-file.ts";
import { KEY_SCOPES, type KeyScope } from "./key-scopes.ts";

export interface KeyLimits {
  /** Requests per minute (a rolling minute). */
  rpm?: number;
  /** Prompt plus completion tokens per minute (a rolling minute). */
  tpm?: number;
  /** Prompt plus completion tokens per day (UTC). */
  tokensPerDay?: number;
}

export interface KeyGrant {
  /** Owns what the key's requests store; names its usage and metrics. Never the secret. */
  owner: string;
  /** A key of the keys file: its usage is counted and its limits apply. */
  named: boolean;
  scopes: ReadonlySet<KeyScope>;
  /** The models it may run; undefined: every model. */
  models?: readonly string[];
  limits: KeyLimits;
  /** Its share of sequences against other keys' when several wait. */
  weight: number;
  /** Most sequences its requests hold at once. */
  maxParallel?: number;
  /** Unix ms after which the key is refused. */
  expiresAt?: number;
}

const ALL_SCOPES: ReadonlySet<KeyScope> = new Set(KEY_SCOPES);

/** A plain --api-key key: every scope, no limits, not counted. */
export function fullGrant(owner: string): KeyGrant {
  return { owner, named: false, scopes: ALL_SCOPES, limits: {}, weight: 1 };
}

export function grantOf(entry: KeyEntry): KeyGrant {
  return {
    owner: entry.name, named: true, scopes: new Set(entry.scopes), limits: {
      ...(entry.rpm !== undefined ? { rpm: entry.rpm } : {}),
      ...(entry.tpm !== undefined ? { tpm: entry.tpm } : {}),
      ...(entry.tokens_per_day !== undefined ? { tokensPerDay: entry.tokens_per_day } : {}),
    },
    weight: entry.weight ?? 1,
    ...(entry.models ? { models: entry.models } : {}),
    ...(entry.max_parallel !== undefined ? { maxParallel: entry.max_parallel } : {}),
    ...(entry.expires_at !== undefined ? { expiresAt: Date.parse(entry.expires_at) } : {}),
  };
}

/**
 * Whether the grant may run model `id` (a served name, a store name such as "llama3.2:latest", a path):
 * an entry matches the id itself, the id without ":latest", or, ending in "*", any id it starts.
 */
export function allowsModel(grant: KeyGrant, id: string): boolean {
  if (!grant.models) return true;
  const untagged = id.endsWith(":latest") ? id.slice(0, -":latest".length) : id;
  return grant.models.some((entry) => entry.endsWith("*") ? id.startsWith(entry.slice(0, -1)) : entry === id || entry === untagged);
}
