// What a named key may do. A route (and each LM Studio SDK endpoint) names the one scope it needs in its
// route table; a route that needs none is open to any valid key (listings, status, the key's own usage).
//   chat        generate text: chat, completions, responses, messages, tokenizing, LM Studio's predict
//   embeddings  embeddings, reranking and scoring
//   audio       transcription and speech
//   admin       change what the server holds: pull, create, copy, delete, push, load, unload, LM Studio
//               downloads; read other keys' usage and the metrics
//   mcp         let a request use MCP servers (tools the server runs on the request's behalf)

export const KEY_SCOPES = ["chat", "embeddings", "audio", "admin", "mcp"] as const;

export type KeyScope = (typeof KEY_SCOPES)[number];

/** What a route needs of the key that calls it: one scope, or just a valid key ("key"). */
export type RouteNeed = KeyScope | "key";

/** A new key's scopes when `keys create` names none: it may use models, not manage them or run tools. */
export const DEFAULT_SCOPES: readonly KeyScope[] = ["chat", "embeddings", "audio"];

export function isKeyScope(value: string): value is KeyScope {
  return (KEY_SCOPES as readonly string[]).includes(value);
}
