// How many tokens of KV cache a model may take: half the memory free at load, in whole 256-token blocks.
// The engine sizes its context with it; the server asks it too, to tell a client the most context a
// model can grow to before it tries.

export function kvTokensWithinMemory(freeBytes: number, kvBytesPerToken: number): number {
  return Math.floor(freeBytes / 2 / kvBytesPerToken / 256) * 256;
}
