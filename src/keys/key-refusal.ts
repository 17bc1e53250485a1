// Why a key may not do what it asks: a missing scope (403), a limit reached (429, with the seconds until
// it is not), an expired key (401). Each API words the status its own way; the message names the scope
// or the limit.
import type { KeyScope } from "./key-scopes.ts";

export type LimitName = "rpm" | "tpm" | "tokens_per_day";

export class KeyRefusal extends Error {
  override name = "KeyRefusal";

  constructor(
    readonly status: 401 | 403 | 429,
    message: string,
    readonly detail: { scope?: KeyScope; limit?: LimitName; retryAfterSeconds?: number } = {},
  ) {
    super(message);
  }
}

export function missingScope(owner: string, scope: KeyScope, what: string, held: Iterable<KeyScope>): KeyRefusal {
  const scopes = [...held];
  return new KeyRefusal(403, `Missing scope "${scope}": API key "${owner}" cannot ${what} (its scopes: ${scopes.length ? scopes.join(", ") : "none"})`, { scope });
}

export function modelNotAllowed(owner: string, model: string, allowed: readonly string[]): KeyRefusal {
  return new KeyRefusal(403, `API key "${owner}" may not use model "${model}" (its models: ${allowed.length ? allowed.join(", ") : "none"})`);
}
