// The benchmark's reading of llama-batched-bench's JSONL: the decode-only rate it prints, and the rate
// for the whole case (prompts, then outputs) that a server doing the same work is judged against.
import { expect, test } from "bun:test";
import { parseBatchedBench } from "../../scripts/bench/llama-tools.ts";

// Lines as llama-batched-bench --output-format jsonl prints them (its log lines around them are skipped).
const output = [
  "main: n_kv_max = 4096, n_batch = 2048, n_ubatch = 512",
  '{"n_kv_max": 4096, "n_batch": 2048, "n_ubatch": 512, "flash_attn": -1, "is_pp_shared": 0, "n_gpu_layers": -1, "n_threads": 2, "n_threads_batch": 2, "pp": 128, "tg": 128, "pl": 1, "n_kv": 256, "t_pp": 0.250000, "speed_pp": 512.000000, "t_tg": 2.560000, "speed_tg": 50.000000, "t": 2.810000, "speed": 91.103203}',
  '{"n_kv_max": 4096, "n_batch": 2048, "n_ubatch": 512, "flash_attn": -1, "is_pp_shared": 0, "n_gpu_layers": -1, "n_threads": 2, "n_threads_batch": 2, "pp": 128, "tg": 128, "pl": 8, "n_kv": 2048, "t_pp": 2.000000, "speed_pp": 512.000000, "t_tg": 7.000000, "speed_tg": 146.285714, "t": 9.000000, "speed": 227.555556}',
  "llama_perf_context_print: total time = 12000 ms",
].join("\n");

test("decode-only and whole-case rates per batch size", () => {
  const { decode, endToEnd } = parseBatchedBench(output);
  expect([...decode.keys()]).toEqual([1, 8]);
  expect(decode.get(8)).toBeCloseTo(146.29, 2);
  // 8 × 128 generated tokens over 2 s of prompts and 7 s of decoding
  expect(endToEnd.get(8)).toBeCloseTo(1024 / 9, 6);
  expect(endToEnd.get(1)).toBeCloseTo(128 / 2.81, 6);
});

test("output with no result lines gives empty maps", () => {
  const { decode, endToEnd } = parseBatchedBench("error: failed to load model\n");
  expect(decode.size).toBe(0);
  expect(endToEnd.size).toBe(0);
});
