// The engine of one model: loads it, creates a context for N parallel sequences, and drives the
// scheduler's step loop. It does not know whether it runs in a child process or a Worker.
import { statSync } from "node:fs";
import { LlamaModel, LlamaContext, computeSummary, backendDevices } from "../../ffi/llama.ts";
import { MtmdContext } from "../../ffi/mtmd.ts";
import { readGgufHeaderSync, ggufNumber, ggufArchKey } from "../store/gguf.ts";
import { freemem } from "node:os";
import { physicalCoreCount } from "../../ffi/hardware.ts";
import { log as writeLog, logEnabled, logger } from "../log.ts";
import { setNativeLog } from "../../ffi/native-log.ts";
import { kvTokensWithinMemory } from "./context-memory.ts";
import { Scheduler, DEFAULT_QUEUE_LIMIT } from "./scheduler.ts";
import { CPU_PROMPT_FLUSH_TOKENS } from "./planning/step-budget.ts";
import { diskReadPause } from "./planning/disk-read-pause.ts";
import { gatherArrivals } from "./planning/arrival-window.ts";
import { DEFAULT_MAX_DRAFT_TOKENS } from "./speculative/options.ts";
import { ImageEncoder } from "./image-encoder.ts";
import { createSpeculation } from "./speculative/create.ts";
import type { Speculation } from "./speculative/speculation.ts";
import { layersOnRpcServers } from "./rpc-split.ts";
import { checkTokenIds } from "./token-ids.ts";
import { countPromptTokens } from "./request-intake.ts";
import { embedText, rankDocuments } from "./pooled-outputs.ts";
import type { EventSink } from "./sequence.ts";
import { EngineError, type EmbedResult, type EngineOptions, type EngineStats, type GenerateRequest, type ModelInfo, type PromptInput, type RankResult, type SpeechRequest } from "./types.ts";
import { ThreadGovernor } from "./thread-governor.ts";
import type { DiskPromptStore } from "./prompt-cache/disk-store.ts";
import { openDiskCache, promptCacheFor } from "./prompt-cache/open-tiers.ts";
import { openKvEventPublisher, type KvEventPublisher } from "./kv-events/publisher.ts";
import type { KvEventsConfig } from "./kv-events/kv-events-config.ts";
import type { SpeechEvent } from "./protocol.ts";
import { SpeechRunner } from "./speech-runner.ts";
import { attachAdapters, type LoraAdapters } from "./lora-adapters.ts";
import { EngineAdapters } from "./engine-adapters.ts";

// llama.cpp's own log lines go through llamux's logger in every process that runs an engine.
setNativeLog({ write: writeLog, debug: logEnabled("debug") });

export const DEFAULT_PARALLEL = 4;
export const DEFAULT_CONTEXT_PER_SEQUENCE = 4096;
export const DEFAULT_BATCH_SIZE = 512;
/** A step loop with requests waiting but none runnable (a disk read in flight) looks again after this long. */
const IDLE_POLL_MS = 10;
/** As llama-server does: a marker no user can type without knowing it, so text cannot forge an image slot. */
function randomMediaMarker(): string {
  return `<__media_${crypto.randomUUID().replaceAll("-", "")}__>`;
}

const log = logger("engine");

/**
 * The context per sequence and the memory the sequences share. Per sequence: the one asked for, else 4096
 * tokens (Ollama's and LM Studio's default); never more than the model was trained for. Shared: the one
 * asked for, else that × parallel, at least one sequence's; capped so that the KV cache fits in half of the
 * memory free now (and a sequence's context within it). The default is not the trained context: llama.cpp
 * allocates and clears the whole KV cache when the context is created, so 8 sequences × 23,296 tokens
 * (half the free memory here) made the first load 3-10× slower than llama-server's (the kernel zeroing
 * pages was three quarters of the load) and took gigabytes a request rarely needs.
 */
function contextWithinMemory(model: LlamaModel, parallel: number, requested: number | undefined, requestedShared: number | undefined): { perSequence: number; shared: number } {
  const trained = model.trainedContextLength || DEFAULT_CONTEXT_PER_SEQUENCE;
  if (requested !== undefined && requested > trained) {
    log.warn(`context of ${requested} tokens asked for is more than the model was trained for: using ${trained}`);
  }
  const wanted = Math.min(requested ?? trained, trained);
  const kvBytesPerToken = model.kvCacheBytesPerToken;
  const wantedOrDefault = requested === undefined ? Math.min(wanted, DEFAULT_CONTEXT_PER_SEQUENCE) : wanted;
  const sharedWanted = Math.max(wantedOrDefault, requestedShared ?? wantedOrDefault * parallel);
  const fitting = kvTokensWithinMemory(freemem(), kvBytesPerToken);
  const shared = Math.max(Math.min(256 * parallel, sharedWanted), Math.min(sharedWanted, fitting));
  if (shared < sharedWanted) {
    log.info(`context capped at ${shared} tokens shared by ${parallel} sequences (asked ${sharedWanted}): ${Math.round(kvBytesPerToken / 1024)} KiB per token must fit in half the free memory`);
  }
  return { perSequence: Math.min(wantedOrDefault, shared), shared };
}

/**
 * How many layers to offload when only a share of GPU memory is given: all of them if the file fits
 * in that share of the free memory, else the proportion that fits. No GPU: none.
 */
function gpuLayersWithin(options: EngineOptions): number {
  if (options.gpuMemoryFraction === undefined) return 0;
  const gpus = backendDevices().filter((d) => d.type === "gpu" || d.type === "igpu");
  const budget = gpus.reduce((sum, g) => sum + g.freeBytes, 0) * options.gpuMemoryFraction;
  if (budget <= 0) {
    log.info("no GPU found: the model runs on the CPU");
    return 0;
  }
  const fileBytes = statSync(options.modelPath).size;
  if (fileBytes <= budget) return -1;
  const layers = layerCountOf(options.modelPath);
  return Math.floor(layers * (budget / fileBytes));
}

/** No layer is offloaded, or there is nothing to offload to (a CPU-only build given -1 layers; RPC servers count as GPUs). */
function runsOnCpu(gpuLayers: number): boolean {
  return gpuLayers === 0 || !backendDevices().some((d) => d.type === "gpu" || d.type === "igpu");
}

function layerCountOf(path: string): number {
  const header = readGgufHeaderSync(path, { maxArrayLength: 0 });
  return ggufNumber(header, ggufArchKey(header, "block_count")) ?? 0;
}

/** The projector's header says it generates audio (clip.has_gen_audio_encoder): a text-to-speech model. */
function projectorGeneratesAudio(path: string): boolean {
  try {
    return readGgufHeaderSync(path, { maxArrayLength: 0 }).metadata.get("clip.has_gen_audio_encoder")?.value === true;
  } catch {
    // MtmdContext.load reports what is wrong with the file
    return false;
  }
}

/** The text of every control token (such as "<|im_start|>"), which only a chat template may produce. */
function controlTokenTexts(model: LlamaModel): string[] {
  const texts = new Set<string>();
  const decoder = new TextDecoder();
  for (let token = 0; token < model.vocab.size; token++) {
    if (!model.vocab.isControl(token)) continue;
    const text = decoder.decode(model.vocab.tokenToPiece(token, true));
    if (text) texts.add(text);
  }
  return [...texts];
}

export class Engine {
  private readonly scheduler: Scheduler;
  private looping = false;
  /** When the latest request arrived (performance.now()), for gathering a burst (planning/arrival-window.ts). */
  private latestArrival = 0;
  readonly info: ModelInfo;
  /** Resolves once the disk tier of the prompt cache is open, with the stores of the adapters loaded with the model (at once when there is none). */
  readonly diskCacheReady: Promise<void>;
  private diskCache: DiskPromptStore | undefined;
  private disposed = false;
  /** LoRA adapters per request (--enable-lora). */
  private readonly lora: EngineAdapters | undefined;
  private kvPublisher: KvEventPublisher | undefined;
  /** Resolves once the KV-cache event publisher is bound (at once without one). */
  readonly kvEventsReady: Promise<void> = Promise.resolve();

  private constructor(
    private readonly model: LlamaModel, private readonly context: LlamaContext, options: EngineOptions, threads: number, gpuLayers: number,
    contextPerSequence: number,
    private readonly images?: ImageEncoder,
    private readonly speculation?: Speculation,
    private readonly speech?: SpeechRunner,
    adapters?: LoraAdapters,
  ) {
    // threads the user did not choose follow what the machine has free (thread-governor.ts)
    const governed = options.threads === undefined && runsOnCpu(gpuLayers) && threads > 1;
    const canRollBack = !model.isRecurrentOrHybrid;
    // a state leaving host memory goes to the disk tier, once that is open
    const promptCache = promptCacheFor(options, canRollBack, (entry) => this.scheduler.spill(entry));
    this.scheduler = new Scheduler(model, context, {
      queueLimit: options.queueLimit ?? DEFAULT_QUEUE_LIMIT, images, speculation, contextPerSequence,
      ...(runsOnCpu(gpuLayers) ? { promptFlushTokens: CPU_PROMPT_FLUSH_TOKENS } : {}),
      ...(governed ? { threadGovernor: new ThreadGovernor({ maxThreads: threads, apply: (n) => context.setThreads(n) }) } : {}),
      ...(promptCache ? { promptCache } : {}),
      ...(adapters ? { adapters } : {}),
    });
    if (options.kvEvents && !speech) this.kvEventsReady = this.openKvEvents(options.kvEvents, options.modelPath, canRollBack);
    const baseDiskReady = promptCache && !speech
      ? openDiskCache(options, canRollBack).then((store) => {
        this.diskCache = store;
        if (store) this.scheduler.attachDisk(store);
      }, (error: Error) => log.warn(`prompt cache on disk: cannot open it, going on without: ${error.message}`))
      : Promise.resolve();
    const adapterDisk = (path: string) => openDiskCache(options, canRollBack, path);
    this.lora = this.scheduler.adapters && new EngineAdapters(this.scheduler.adapters, baseDiskReady.then(() => this.diskCache !== undefined && !this.disposed), adapterDisk);
    this.diskCacheReady = Promise.all([baseDiskReady, this.lora?.ready()]).then(() => {});
    const chatTemplate = options.chatTemplate ?? model.chatTemplate();
    this.info = {
      path: model.path,
      architecture: model.architecture,
      description: model.description,
      trainedContextLength: model.trainedContextLength,
      kvBytesPerToken: model.kvCacheBytesPerToken,
      contextPerSequence,
      sharedContext: context.contextSize,
      sharedKvPool: context.unifiedKv,
      sequences: context.sequences,
      embeddingSize: model.embeddingSize,
      parameterCount: model.parameterCount,
      sizeBytes: model.sizeBytes,
      ...(chatTemplate !== undefined ? { chatTemplate } : {}),
      recurrentOrHybrid: model.isRecurrentOrHybrid,
      vocabularySize: model.vocab.size,
      bosToken: model.vocab.bos,
      eosToken: model.vocab.eos,
      bosText: model.vocab.bos >= 0 ? new TextDecoder().decode(model.vocab.tokenToPiece(model.vocab.bos, true)) : "",
      eosText: model.vocab.eos >= 0 ? new TextDecoder().decode(model.vocab.tokenToPiece(model.vocab.eos, true)) : "",
      addsBos: model.vocab.addBos,
      controlTokenTexts: controlTokenTexts(model),
      threads,
      embeddings: options.embeddings ?? false,
      reranker: (options.embeddings ?? false) && context.poolingType === "rank",
      compute: computeSummary(),
      metadata: model.allMetadata(),
      ...(images ? { vision: { projectorPath: images.projector.path, mediaMarker: images.mediaMarker, images: images.projector.supportsVision, audio: images.projector.supportsAudio } } : {}),
      ...(speculation ? { speculative: speculation.summary } : {}),
      ...(speech ? { speech: speech.info } : {}),
    };
  }

  static load(options: EngineOptions): Engine {
    const gpuLayers = options.rpcServers?.length
      ? layersOnRpcServers(options.rpcServers, layerCountOf(options.modelPath), options.gpuLayers)
      : options.gpuLayers ?? gpuLayersWithin(options);
    const model = LlamaModel.load(options.modelPath, { gpuLayers });
    let images: ImageEncoder | undefined;
    let speculation: Speculation | undefined;
    let speech: SpeechRunner | undefined;
    let adapters: LoraAdapters | undefined;
    try {
      // A text-to-speech projector: one sequence, whose hidden states the pipeline reads (speech-runner.ts)
      const speaks = options.projectorPath !== undefined && projectorGeneratesAudio(options.projectorPath);
      const parallel = speaks ? 1 : options.parallel ?? DEFAULT_PARALLEL;
      const embeddings = options.embeddings ?? false;
      // Embedding inputs are one batch each: their sequences keep memory of their own.
      const sizes = contextWithinMemory(model, parallel, options.contextPerSequence, embeddings ? undefined : options.sharedContext);
      const threads = options.threads ?? physicalCoreCount();
      const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
      const context = LlamaContext.create(model, {
        contextSize: sizes.shared,
        // A stream of its own per sequence when each gets its whole context anyway (llama-server's default):
        // attention in a unified pool spans every cell in use, other sequences' cached prefixes included
        // (measured: a cold prefill beside three sequences holding 18k-token prefixes took twice as long).
        // The pool is shared only when it is smaller than that, so that one sequence can still use it all.
        unifiedKv: !embeddings && sizes.shared < parallel * sizes.perSequence,
        batchSize,
        sequences: parallel,
        threads,
        flashAttention: options.flashAttention ?? "auto",
        ...(options.kvCacheType ? { kvCacheType: options.kvCacheType } : {}),
        embeddings: (options.embeddings ?? false) || speaks,
        ...(options.embeddings && options.rank ? { pooling: "rank" as const } : {}),
        // Non-causal (embedding) models must see a whole input in one micro-batch.
        ...(options.embeddings ? { microBatchSize: batchSize } : {}),
        // a hybrid model verifying drafts must be able to take the rejected ones out of its recurrent state
        ...(options.speculative && model.isRecurrentOrHybrid ? { recurrentRollback: options.speculative.maxDraftTokens ?? DEFAULT_MAX_DRAFT_TOKENS } : {}),
      });
      try {
        adapters = attachAdapters(model, context, options.loraAdapters ?? [], options.embeddings ? undefined : options.lora);
        if (options.projectorPath) {
          // a speech projector keeps libmtmd's own marker: the pipeline writes it to encode a reference voice
          const projector = MtmdContext.load(options.projectorPath, model, { threads, gpu: gpuLayers !== 0, ...(speaks ? {} : { mediaMarker: randomMediaMarker() }) });
          const generated = projector.generatedAudio;
          if (generated) {
            const info = { pipeline: generated.pipeline, sampleRate: generated.sampleRate, ...(generated.variant ? { variant: generated.variant } : {}) };
            speech = new SpeechRunner(model, context, projector, info, options.queueLimit ?? DEFAULT_QUEUE_LIMIT, batchSize);
          } else {
            images = new ImageEncoder(projector);
          }
        }
        if (options.speculative && !options.embeddings) {
          speculation = createSpeculation(options.speculative, model, context, {
            gpuLayers, threads, flashAttention: options.flashAttention, kvCacheType: options.kvCacheType, contextPerSequence: sizes.perSequence,
          });
        }
      } catch (error) {
        images?.dispose();
        speech?.dispose("engine load failed");
        context.dispose();
        throw error;
      }
      return new Engine(model, context, options, threads, gpuLayers, sizes.perSequence, images, speculation, speech, adapters);
    } catch (error) {
      model.dispose();
      throw error;
    }
  }

  stats(): EngineStats {
    const stats = this.scheduler.stats();
    // a speech engine's one sequence runs speeches, never the scheduler's requests
    if (this.speech) return { ...stats, running: this.speech.active ? 1 : 0, waiting: this.speech.waiting, speechFrames: this.speech.framesMade };
    return stats;
  }

  /**
   * Loads a LoRA adapter requests may then name (vLLM's /v1/load_lora_adapter); the same file under the
   * same name again changes nothing, another file replaces it. EngineError when LoRA is off or the file
   * cannot serve (lora-adapters.ts).
   */
  loadAdapter(name: string, path: string): void {
    this.loraAdapters().load(name, path);
  }

  /** Unloads a LoRA adapter (its requests in flight finish on it); false when none has the name. */
  unloadAdapter(name: string): boolean {
    return this.loraAdapters().unload(name);
  }

  private loraAdapters(): EngineAdapters {
    if (!this.lora) throw new EngineError("invalid_request", "LoRA is not enabled. Use --enable-lora to enable LoRA.");
    return this.lora;
  }

  /** Queues a request and makes sure the step loop runs; throws EngineError when it cannot be queued. */
  submit(request: GenerateRequest, emit: EventSink): void {
    if (this.speech) {
      throw new EngineError("invalid_request", `Model "${this.info.path}" is a text-to-speech model: it speaks text and generates none (its tokens are audio codes)`);
    }
    this.scheduler.submit(request, emit);
    this.latestArrival = performance.now();
    void this.runLoop();
  }

  cancel(id: string): void {
    if (this.speech?.cancel(id)) return;
    this.scheduler.cancel(id);
    void this.runLoop();
  }

  /** Queues a speech (a speech model only); its PCM and its end go to `emit`. */
  speak(id: string, request: SpeechRequest, emit: (event: SpeechEvent) => void): void {
    if (!this.speech) throw new EngineError("invalid_request", `Model "${this.info.path}" does not produce speech`);
    this.speech.submit(id, request, emit);
  }

  /**
   * L2-normalised pooled embedding of one text (models loaded with `embeddings`), its token count, and
   * the vector's length before normalising (pooled-outputs.ts). With `truncate`, an input longer than the
   * embedding batch keeps its first tokens instead of failing.
   */
  embed(text: string, truncate = false): EmbedResult {
    if (!this.info.embeddings) throw new EngineError("invalid_request", `Model "${this.info.path}" was not loaded for embeddings`);
    if (this.info.reranker) throw new EngineError("invalid_request", `Model "${this.info.path}" is a reranker: it scores query and document pairs and produces no embeddings`);
    return embedText(this.model, this.context, text, truncate);
  }

  /** A reranker's score of each document against the query (pooled-outputs.ts). */
  rank(query: string, documents: string[]): RankResult {
    if (!this.info.reranker) throw new EngineError("invalid_request", `Model "${this.info.path}" is not a reranker`);
    return rankDocuments(this.model, this.context, Math.min(this.context.batchSize, this.info.contextPerSequence), query, documents);
  }

  tokenize(text: string, addSpecial = true, parseSpecial = true): number[] {
    return Array.from(this.model.vocab.tokenize(text, { addSpecial, parseSpecial }));
  }

  /** The prompt's length as a request's usage counts it, its media decoded and placed but not encoded. */
  countPromptTokens(prompt: PromptInput): number {
    return countPromptTokens(this.model, this.images, prompt);
  }

  detokenize(tokens: number[]): string {
    checkTokenIds(tokens, this.model.vocab.size, "the tokens");
    return this.model.vocab.detokenize(tokens);
  }

  // Steps until no work is left, yielding to the event loop between steps so that new requests and
  // cancellations (IPC messages) are taken in at every step; woken from idle, it first lets a burst of
  // requests arrive (planning/arrival-window.ts). A step with nothing to run (requests waiting
  // for a disk read) waits for that read, or a moment; while a read is in flight beside running steps,
  // the engine pauses a little between them for it (planning/disk-read-pause.ts). Idle again, the engine
  // writes what the disk tier lacks of its sequences' memory.
  private async runLoop(): Promise<void> {
    if (this.looping) return;
    this.looping = true;
    try {
      const woke = performance.now();
      while (gatherArrivals(performance.now() - this.latestArrival, performance.now() - woke)) await Bun.sleep(1);
      while (this.scheduler.hasWork) {
        const stepStarted = performance.now();
        if (this.scheduler.step()) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          if (this.scheduler.readingDisk) await Promise.race([this.scheduler.waitForDisk(), Bun.sleep(diskReadPause(performance.now() - stepStarted))]);
        } else {
          await Promise.race([this.scheduler.waitForDisk(), Bun.sleep(IDLE_POLL_MS)]);
        }
      }
      if (!this.disposed) this.scheduler.persistIdle();
    } finally {
      this.looping = false;
    }
  }

  /**
   * Binds the KV-cache event publisher. A recurrent model's running state cannot be cut back to a block
   * boundary, so a router could not reuse any prefix it announced: it publishes nothing (logged).
   */
  private async openKvEvents(config: KvEventsConfig, modelPath: string, canRollBack: boolean): Promise<void> {
    if (!canRollBack) {
      log.warn(`KV-cache events: "${modelPath}" is a recurrent or hybrid model, whose cached prefixes cannot be reused block by block: no events are published for it`);
      return;
    }
    try {
      const publisher = await openKvEventPublisher(config);
      if (this.disposed) return publisher.close();
      this.kvPublisher = publisher;
      this.scheduler.attachKvEvents(publisher.events);
      log.info(`KV-cache events of "${modelPath}" published on ${config.endpoint}${publisher.port !== undefined ? ` (port ${publisher.port})` : ""} under topic "${config.topic}"`);
    } catch (error) {
      log.warn(`KV-cache events: cannot publish on ${config.endpoint}: ${(error as Error).message}`);
    }
  }

  /**
   * Resolves once the engine is idle and every state the disk tier lacks is written (tests; a clean
   * shutdown). Returns the states it queued.
   */
  async flushDiskCache(): Promise<number> {
    await this.diskCacheReady; // the adapters' stores too
    while (this.looping) await Bun.sleep(IDLE_POLL_MS);
    const queued = this.scheduler.persistIdle();
    await Promise.all([this.diskCache?.flush(), this.lora?.flush()]);
    return queued;
  }

  /**
   * Frees the engine. What its idle sequences and host cache hold goes to the disk tier first (an unload
   * or a model swap keeps it); the returned promise settles once those writes are done, which a host
   * about to exit waits for (within its own deadline).
   */
  dispose(reason = "engine stopped"): Promise<void> {
    this.disposed = true;
    if (!this.looping) this.scheduler.persistIdle();
    this.scheduler.failAll(reason);
    this.kvPublisher?.close();
    this.speech?.dispose(reason);
    this.images?.dispose();
    this.speculation?.dispose();
    this.context.dispose();
    this.model.dispose();
    // states queued for the disk go on being written (they are copies); nothing new is queued
    const disk = this.diskCache;
    return Promise.all([disk?.flush().then(() => disk.close()), this.lora?.close()]).then(() => {});
  }
}
