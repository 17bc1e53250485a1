// Registry tokens as Ollama asks for them: a 401's `WWW-Authenticate: Bearer realm=…,service=…,scope=…`
// names a realm on the registry's own host (another host is refused, so no token or signature leaves
// for it, nor through a redirect); the realm is asked with GET realm?service=…&scope=…(one per scope)
// &ts=…&nonce=…, signed with the registry key over "GET,<that url>,<base64 of the hex sha256 of an
// empty body>" when there is a key (anonymously otherwise), and answers {"token": …}.
import { createHash, randomBytes } from "node:crypto";
import { HttpStatusError, bodyExcerpt, fetchFollowingRedirects } from "../http.ts";
import type { RegistryKey } from "./registry-key.ts";

export interface RegistryChallenge {
  realm: string;
  service: string;
  scope: string;
}

export function parseChallenge(header: string): RegistryChallenge | undefined {
  if (!/^Bearer\s/i.test(header)) return undefined;
  const params = Object.fromEntries([...header.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!.toLowerCase(), m[2]!]));
  return params.realm ? { realm: params.realm, service: params.service ?? "", scope: params.scope ?? "" } : undefined;
}

/** A token answer is a small JSON object; a realm that sends more is not read further. */
const MAX_TOKEN_ANSWER_BYTES = 64 << 10;
const EMPTY_BODY_DIGEST = Buffer.from(createHash("sha256").update("").digest("hex")).toString("base64");

/** The token for a challenge met at `registryHost`; throws with the realm's answer when it refuses. */
export async function registryToken(challenge: RegistryChallenge, registryHost: string, key: RegistryKey | undefined, signal?: AbortSignal): Promise<string> {
  const url = new URL(challenge.realm);
  if (url.host !== registryHost) throw new Error(`realm host "${url.host}" does not match original host "${registryHost}"`);
  if (challenge.service) url.searchParams.append("service", challenge.service);
  for (const scope of challenge.scope.split(" ").filter(Boolean)) url.searchParams.append("scope", scope);
  url.searchParams.append("ts", String(Math.floor(Date.now() / 1000)));
  url.searchParams.append("nonce", randomBytes(16).toString("base64url"));
  const target = url.toString();
  const credentials: Record<string, string> = key ? { Authorization: key.authorization(`GET,${target},${EMPTY_BODY_DIGEST}`) } : {};
  let text: string;
  try {
    const { response } = await fetchFollowingRedirects(target, { credentials, maxBytes: MAX_TOKEN_ANSWER_BYTES, bodyLabel: "the token answer", ...(signal ? { signal } : {}) });
    text = await response.text();
  } catch (error) {
    if (error instanceof HttpStatusError) throw new Error(error.body ? `${error.status}: ${error.body}` : String(error.status), { cause: error });
    throw error;
  }
  let body: { token?: unknown; access_token?: unknown };
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`the token realm answered something other than JSON: ${bodyExcerpt(text.slice(0, 100))}`);
  }
  const token = body.token ?? body.access_token;
  if (typeof token !== "string" || !token) throw new Error("the token realm answered no token");
  return token;
}
