// llama.cpp keeps one KV cell per token and hands cells out one by one; what vLLM's ecosystem reads
// (the gateway's cache_config_info, KV-cache events, prefix routers) counts blocks of tokens. llamux
// reports its cells as blocks of vLLM's default size on CUDA, so both sides hash and count alike.
export const KV_BLOCK_TOKENS = 16;

/** Whole blocks in `cells` cells: a partial block holds nothing a block-keyed reader can match. */
export function wholeBlocks(cells: number): number {
  return Math.floor(cells / KV_BLOCK_TOKENS);
}
