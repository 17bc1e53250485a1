// vLLM's Prometheus metrics (reference/vllm.md §6) with prom-client: the same names, labels and buckets
// as vLLM's V1 logger, so its dashboards and autoscalers read llamux unchanged. Counters and histograms
// are fed per finished choice by the GenerationObserver; the load gauges are read from the engines on
// each scrape. Every server gets its own Registry, so several servers can live in one process (tests).
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { KV_BLOCK_TOKENS, wholeBlocks } from "../../engine/kv-blocks.ts";
import type { ModelManager } from "../../engine/model-manager.ts";
import type { FinishedGeneration, GenerationObserver, MetricsExporter } from "../deps.ts";
import type { ModelService } from "../model-service.ts";
import type { UsageBook } from "../../keys/usage-book.ts";
import { keyMetrics } from "./key-metrics.ts";

type Label = "model_name" | "engine";
const labelNames: Label[] = ["model_name", "engine"];
/** vLLM numbers its engine cores; llamux has one per model, always index 0. */
const ENGINE = "0";
/** vLLM creates these series at start, so rates exist before the first request ends. */
const FINISH_REASONS = ["stop", "length", "abort"];

// Buckets as in vllm/v1/metrics/loggers.py.
const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560];
const TOKEN_LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
const REQUEST_LATENCY_BUCKETS = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];

/** vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50, … up to `max`. */
export function oneTwoFiveBuckets(max: number): number[] {
  const buckets: number[] = [];
  for (let exponent = 1; ; exponent *= 10) {
    for (const mantissa of [1, 2, 5]) {
      if (mantissa * exponent > max) return buckets;
      buckets.push(mantissa * exponent);
    }
  }
}
/** vLLM stops at max_model_len; models here differ in context, so one bound fits them all. */
const TOKEN_COUNT_BUCKETS = oneTwoFiveBuckets(1_000_000);

export interface VllmMetrics {
  observer: GenerationObserver;
  metrics: MetricsExporter;
}

/** Metrics of one vLLM-profile server, with the named keys' counters when it has a usage book; spread the result into its ServerDeps. */
export function createVllmMetrics(manager: ModelManager, models: ModelService, keyUsage?: UsageBook): VllmMetrics {
  const registry = new Registry();
  const sampleKeys = keyUsage ? keyMetrics(registry, keyUsage) : () => {};
  const registers = [registry];
  const gauge = (name: string, help: string) => new Gauge<Label>({ name, help, labelNames, registers });
  const counter = (name: string, help: string) => new Counter<Label>({ name, help, labelNames, registers });
  const histogram = (name: string, help: string, buckets: number[]) => new Histogram<Label>({ name, help, labelNames, buckets, registers });

  const running = gauge("vllm:num_requests_running", "Number of requests in model execution batches.");
  const waiting = gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.");
  const kvCacheUsage = gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.");
  // Info gauges the Gateway API Inference Extension reads (its Model Server Protocol): labels carry the facts.
  const cacheConfigInfo = new Gauge({
    name: "vllm:cache_config_info", help: "Information of the LLMEngine CacheConfig",
    labelNames: [...labelNames, "block_size", "num_gpu_blocks", "enable_prefix_caching", "prefix_caching_hash_algo"], registers,
  });
  const loraRequestsInfo = new Gauge({
    name: "vllm:lora_requests_info", help: "Running stats on lora requests.",
    labelNames: [...labelNames, "max_lora", "running_lora_adapters", "waiting_lora_adapters"], registers,
  });
  // llamux's own: how well continuous batching packs decode steps (tokens per step = tokens / steps).
  const decodeSteps = gauge("llamux:decode_steps", "llama_decode calls of the loaded engines since they started.");
  const decodedTokens = gauge("llamux:decoded_tokens", "Tokens those llama_decode calls took.");
  const engineDraftTokens = gauge("llamux:draft_tokens", "Speculative decoding: tokens drafted by the loaded engines since they started (every profile's requests).");
  const engineAcceptedTokens = gauge("llamux:accepted_draft_tokens", "Speculative decoding: draft tokens the loaded engines accepted.");
  // the host prompt cache (--cache-ram) and prefixes copied between sequences; their hits are in vllm:prefix_cache_hits_total
  const promptCacheBytes = gauge("llamux:prompt_cache_bytes", "Host memory held by the loaded engines' prompt caches (--cache-ram), in bytes.");
  const promptCacheEntries = gauge("llamux:prompt_cache_entries", "Sequence states held in the loaded engines' prompt caches.");
  const promptCacheRestores = gauge("llamux:prompt_cache_restores", "Prompts that restored a state from the prompt cache since the engines started.");
  const promptCacheEvictions = gauge("llamux:prompt_cache_evictions", "States dropped from the prompt cache to stay within --cache-ram, least recently used first.");
  const copiedPrefixTokens = gauge("llamux:copied_prefix_tokens", "Prompt tokens taken from another sequence's KV cells instead of being processed.");
  // each tier of the prompt cache: host memory (--cache-ram) and disk (--cache-disk)
  const tierGauge = (name: string, help: string) => new Gauge<Label | "tier">({ name, help, labelNames: [...labelNames, "tier"], registers });
  const tierHits = tierGauge("llamux:prompt_cache_hits", "Admitted prompts that took their prefix from this tier of the prompt cache (ram, disk) since the engines started.");
  const tierMisses = tierGauge("llamux:prompt_cache_misses", "Admitted prompts that looked in this tier of the prompt cache and took nothing from it.");
  const tierBytes = tierGauge("llamux:prompt_cache_tier_bytes", "Bytes held by this tier of the prompt cache (disk: this model's files).");

  const promptTokens = counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.");
  const generationTokens = counter("vllm:generation_tokens_total", "Number of generation tokens processed.");
  const prefixCacheQueries = counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.");
  const prefixCacheHits = counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.");
  // a prompt that gave its sequence to a mostly cached request (src/engine/planning/preemption.ts)
  const preemptions = counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.");
  /** Each engine's preemptions already counted (an engine counts from its start; a reloaded one is a new object). */
  const preemptionsSeen = new WeakMap<object, number>();
  // speculative decoding (serve --speculative-config / --model-draft): vLLM's names
  const draftTokens = counter("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.");
  const acceptedDraftTokens = counter("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.");
  const requestSuccess = new Counter<Label | "finished_reason">({
    name: "vllm:request_success_total", help: "Count of successfully processed requests.", labelNames: [...labelNames, "finished_reason"], registers,
  });

  const requestPromptTokens = histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.", TOKEN_COUNT_BUCKETS);
  const requestGenerationTokens = histogram("vllm:request_generation_tokens", "Number of generation tokens processed.", TOKEN_COUNT_BUCKETS);
  const timeToFirstToken = histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", TTFT_BUCKETS);
  const interTokenLatency = histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", TOKEN_LATENCY_BUCKETS);
  const requestTimePerOutputToken = histogram("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", TOKEN_LATENCY_BUCKETS);
  const e2eLatency = histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", REQUEST_LATENCY_BUCKETS);
  const queueTime = histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", REQUEST_LATENCY_BUCKETS);
  const prefillTime = histogram("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", REQUEST_LATENCY_BUCKETS);
  const decodeTime = histogram("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", REQUEST_LATENCY_BUCKETS);
  const inferenceTime = histogram("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", REQUEST_LATENCY_BUCKETS);

  const counters = [promptTokens, generationTokens, prefixCacheQueries, prefixCacheHits, preemptions];
  const histograms = [requestPromptTokens, requestGenerationTokens, timeToFirstToken, interTokenLatency, requestTimePerOutputToken,
    e2eLatency, queueTime, prefillTime, decodeTime, inferenceTime];
  for (const { id } of models.list()) {
    const labels = { model_name: id, engine: ENGINE };
    for (const c of counters) c.inc(labels, 0);
    for (const reason of FINISH_REASONS) requestSuccess.inc({ ...labels, finished_reason: reason }, 0);
    for (const h of histograms) h.zero(labels);
  }

  const observer: GenerationObserver = {
    finished({ model, usage, finishReason, e2eSeconds }: FinishedGeneration) {
      const labels = { model_name: model, engine: ENGINE };
      promptTokens.inc(labels, usage.promptTokens);
      generationTokens.inc(labels, usage.completionTokens);
      prefixCacheQueries.inc(labels, usage.promptTokens);
      prefixCacheHits.inc(labels, usage.cachedPromptTokens);
      requestSuccess.inc({ ...labels, finished_reason: finishReason });
      if (usage.draftTokens !== undefined) {
        draftTokens.inc(labels, usage.draftTokens);
        acceptedDraftTokens.inc(labels, usage.acceptedDraftTokens ?? 0);
      }
      requestPromptTokens.observe(labels, usage.promptTokens);
      requestGenerationTokens.observe(labels, usage.completionTokens);
      e2eLatency.observe(labels, e2eSeconds);
      const queueSeconds = usage.queueMs / 1000;
      const decodeSeconds = usage.decodeMs / 1000;
      queueTime.observe(labels, queueSeconds);
      if (usage.completionTokens === 0) return; // no first token: vLLM observes no token timings either
      // vLLM measures TTFT from the request's arrival (template and tokenizing included): e2e minus decode,
      // never less than the engine's own count from submission.
      timeToFirstToken.observe(labels, Math.max(usage.timeToFirstTokenMs / 1000, e2eSeconds - decodeSeconds));
      const prefillSeconds = Math.max(0, (usage.timeToFirstTokenMs - usage.queueMs) / 1000);
      prefillTime.observe(labels, prefillSeconds);
      decodeTime.observe(labels, decodeSeconds);
      inferenceTime.observe(labels, prefillSeconds + decodeSeconds);
      if (usage.completionTokens < 2) return;
      // The engine reports only the decode total, so each of the request's (tokens − 1) gaps is observed
      // as their mean: _count and _sum match vLLM's per-token observations, the spread within a request is lost.
      const gaps = usage.completionTokens - 1;
      const meanGap = decodeSeconds / gaps;
      for (let i = 0; i < gaps; i++) interTokenLatency.observe(labels, meanGap);
      requestTimePerOutputToken.observe(labels, meanGap);
    },
  };

  /** Sets the load gauges from every loaded engine's stats (the engines are shared by all profiles). */
  async function sampleEngines(): Promise<void> {
    const engines = await manager.loaded();
    const samples = await Promise.all(engines.map(async (engine) => ({ engine, stats: await engine.stats().catch(() => undefined) })));
    type Load = {
      running: number; waiting: number; used: number; capacity: number; steps: number; tokens: number; drafted: number; accepted: number;
      cacheBytes: number; cacheEntries: number; restores: number; evictions: number; copied: number;
      tiers: Record<"ram" | "disk", { hits: number; misses: number; bytes: number }>;
      maxLoras: number; runningAdapters: Set<string>; waitingAdapters: Set<string>;
    };
    const empty = (): Load => ({
      running: 0, waiting: 0, used: 0, capacity: 0, steps: 0, tokens: 0, drafted: 0, accepted: 0, cacheBytes: 0, cacheEntries: 0, restores: 0, evictions: 0, copied: 0,
      tiers: { ram: { hits: 0, misses: 0, bytes: 0 }, disk: { hits: 0, misses: 0, bytes: 0 } },
      maxLoras: 0, runningAdapters: new Set(), waitingAdapters: new Set(),
    });
    const load = new Map<string, Load>();
    for (const { id } of models.list()) load.set(id, empty());
    for (const { engine, stats } of samples) {
      if (!stats) continue; // exited between listing and asking
      const path = engine.options.modelPath;
      const name = models.list().find((m) => m.path === path)?.id ?? path;
      const entry = load.get(name) ?? empty();
      entry.running += stats.running;
      entry.waiting += stats.waiting;
      // vLLM counts a finished request's cached blocks as free (evictable); so are idle sequences' cells
      entry.used += stats.activeTokens ?? stats.usedTokens;
      entry.capacity += stats.capacityTokens;
      entry.steps += stats.decodeSteps;
      entry.tokens += stats.decodedTokens;
      entry.drafted += stats.draftTokens;
      entry.accepted += stats.acceptedDraftTokens;
      entry.cacheBytes += stats.promptCache?.bytes ?? 0;
      entry.cacheEntries += stats.promptCache?.entries ?? 0;
      entry.restores += stats.promptCache?.restored ?? 0;
      entry.evictions += stats.promptCache?.evicted ?? 0;
      entry.copied += stats.copiedPrefixTokens;
      const preempted = stats.preemptions ?? 0;
      const newPreemptions = preempted - (preemptionsSeen.get(engine) ?? 0);
      if (newPreemptions > 0) preemptions.inc({ model_name: name, engine: ENGINE }, newPreemptions);
      preemptionsSeen.set(engine, preempted);
      for (const [tier, tierStats] of [["ram", stats.promptCache], ["disk", stats.diskCache]] as const) {
        entry.tiers[tier].hits += tierStats?.hits ?? 0;
        entry.tiers[tier].misses += tierStats?.misses ?? 0;
        entry.tiers[tier].bytes += tierStats?.bytes ?? 0;
      }
      if (stats.loraAdapters) {
        entry.maxLoras += stats.loraAdapters.maxLoras;
        for (const adapter of stats.loraAdapters.running) entry.runningAdapters.add(adapter);
        for (const adapter of stats.loraAdapters.waiting) entry.waitingAdapters.add(adapter);
      }
      load.set(name, entry);
    }
    for (const g of [running, waiting, kvCacheUsage, cacheConfigInfo, loraRequestsInfo, decodeSteps, decodedTokens, engineDraftTokens, engineAcceptedTokens,
      promptCacheBytes, promptCacheEntries, promptCacheRestores, promptCacheEvictions, copiedPrefixTokens, tierHits, tierMisses, tierBytes]) g.reset();
    for (const [name, entry] of load) {
      const labels = { model_name: name, engine: ENGINE };
      running.set(labels, entry.running);
      waiting.set(labels, entry.waiting);
      kvCacheUsage.set(labels, entry.capacity > 0 ? entry.used / entry.capacity : 0);
      if (entry.capacity > 0) {
        cacheConfigInfo.set({
          ...labels, block_size: String(KV_BLOCK_TOKENS), num_gpu_blocks: String(wholeBlocks(entry.capacity)),
          enable_prefix_caching: "True", prefix_caching_hash_algo: "sha256_cbor",
        }, 1);
      }
      // vLLM's value is the time of the sample, so a reader takes the newest series; lists are comma-joined
      loraRequestsInfo.set({
        ...labels, max_lora: String(entry.maxLoras),
        running_lora_adapters: [...entry.runningAdapters].join(","), waiting_lora_adapters: [...entry.waitingAdapters].join(","),
      }, Date.now() / 1000);
      decodeSteps.set(labels, entry.steps);
      decodedTokens.set(labels, entry.tokens);
      engineDraftTokens.set(labels, entry.drafted);
      engineAcceptedTokens.set(labels, entry.accepted);
      promptCacheBytes.set(labels, entry.cacheBytes);
      promptCacheEntries.set(labels, entry.cacheEntries);
      promptCacheRestores.set(labels, entry.restores);
      promptCacheEvictions.set(labels, entry.evictions);
      copiedPrefixTokens.set(labels, entry.copied);
      for (const tier of ["ram", "disk"] as const) {
        tierHits.set({ ...labels, tier }, entry.tiers[tier].hits);
        tierMisses.set({ ...labels, tier }, entry.tiers[tier].misses);
        tierBytes.set({ ...labels, tier }, entry.tiers[tier].bytes);
      }
    }
  }

  const metrics: MetricsExporter = {
    contentType: registry.contentType,
    async render() {
      await sampleEngines();
      sampleKeys();
      return registry.metrics();
    },
  };
  return { observer, metrics };
}
