// Text to speech in the engine: the loop of llama.cpp's llama-tts (tools/tts/tts.cpp) over libmtmd's
// audio-generation helper. The backbone's context is the engine's own, created with embeddings on (each
// frame feeds the backbone's hidden state to the projector) and one sequence.
//
// Speeches run one at a time, queued, never batched with other work: the helper calls llama_decode on the
// context itself, one sequence and one frame at a time, so a speech engine takes no text requests at all
// (Engine.submit refuses them). Between frames the loop yields to the event loop, where cancellations
// arrive; PCM goes to the caller as the helper decodes it (see STREAM_WINDOW_FRAMES). Each frame takes
// a position of the sequence: a prompt that leaves none is refused, and a speech ends at the context's end.
import type { Pointer } from "bun:ffi";
import type { LlamaContext } from "../../ffi/context.ts";
import type { LlamaModel } from "../../ffi/model.ts";
import type { AudioGenerator, MtmdBitmap, MtmdContext } from "../../ffi/mtmd.ts";
import { SamplerChain, defaultSamplerSettings } from "../../ffi/sampler.ts";
import { audioBitmap } from "./image-prompt.ts";
import type { SpeechEvent } from "./protocol.ts";
import { EngineError, type SpeechInfo, type SpeechRequest, type SpeechResult } from "./types.ts";

/** The one sequence speech uses. */
const SPEECH_SEQ = 0;

/**
 * Frames between PCM chunks. The helper decodes frames in windows of its own (code2wav's 72-frame
 * attention window for Qwen3-TTS, 8 latents for Pocket TTS) and keeps the decoder's state between
 * them; reading the output at any other point makes it decode a short window early, which changes the
 * state (Qwen3-TTS pads a short window to 72 frames) and so the rest of the audio. Chunks taken at its
 * own window boundaries are exactly the samples one read at the end gives. Pocket TTS starts its windows
 * again at each text chunk: the helper decodes what it holds of a chunk when the chunk ends.
 */
export const STREAM_WINDOW_FRAMES: Record<SpeechInfo["pipeline"], number> = { qwen3tts: 72, pockettts: 8 };

interface QueuedSpeech {
  id: string;
  request: SpeechRequest;
  emit: (event: SpeechEvent) => void;
  cancelled: boolean;
}

export class SpeechRunner {
  private readonly queue: QueuedSpeech[] = [];
  private current: QueuedSpeech | undefined;
  private running = false;
  private disposedReason: string | undefined;
  private readonly generator: AudioGenerator;
  private readonly suppressed: Array<[number, number]>;
  /** Audio frames made since the engine started, over every speech (the engine's stats report them). */
  framesMade = 0;

  constructor(
    private readonly model: LlamaModel, private readonly context: LlamaContext, private readonly projector: MtmdContext,
    readonly info: SpeechInfo, private readonly queueLimit: number, private readonly batchSize: number,
  ) {
    this.generator = projector.audioGenerator(context);
    this.suppressed = model.vocab.suppressTokens().map((token) => [token, -Infinity]);
  }

  /** Queues a speech; throws EngineError("busy") when the queue is full. */
  submit(id: string, request: SpeechRequest, emit: (event: SpeechEvent) => void): void {
    if (this.queue.length >= this.queueLimit) throw new EngineError("busy", `Cannot queue speech: ${this.queue.length} requests are waiting`);
    this.queue.push({ id, request, emit, cancelled: false });
    void this.run();
  }

  /** Marks a speech cancelled; a running one stops before its next frame. False if no such speech. */
  cancel(id: string): boolean {
    if (this.current?.id === id) {
      this.current.cancelled = true;
      return true;
    }
    const index = this.queue.findIndex((queued) => queued.id === id);
    if (index < 0) return false;
    const [queued] = this.queue.splice(index, 1);
    queued!.emit({ type: "end", result: { frames: 0, samples: 0, promptTokens: 0, stoppedBy: "cancelled" } });
    return true;
  }

  get waiting(): number {
    return this.queue.length;
  }

  get active(): boolean {
    return this.current !== undefined;
  }

  private async run(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let next = this.queue.shift(); next; next = this.queue.shift()) {
        this.current = next;
        try {
          next.emit({ type: "end", result: await this.speak(next) });
        } catch (error) {
          const code = error instanceof EngineError ? error.code : "engine_failure";
          next.emit({ type: "error", code, message: (error as Error).message });
        } finally {
          this.current = undefined;
          if (this.disposedReason === undefined) {
            this.context.clearSequence(SPEECH_SEQ);
            this.generator.reset();
          }
        }
      }
    } finally {
      this.running = false;
    }
  }

  private speakerBitmap(bytes: Uint8Array): MtmdBitmap {
    if (!this.projector.supportsAudio) {
      throw new EngineError("invalid_request", `Cannot use the speaker reference audio: model "${this.model.path}" takes no reference voice (its projector has no speaker encoder)`);
    }
    try {
      return audioBitmap(this.projector, bytes);
    } catch (error) {
      throw new EngineError("invalid_request", `Cannot use the speaker reference audio: ${(error as Error).message}`);
    }
  }

  private async speak(speech: QueuedSpeech): Promise<SpeechResult> {
    const { request } = speech;
    const settings = {
      ...defaultSamplerSettings,
      seed: request.seed >>> 0,
      ...(request.topK !== undefined ? { topK: request.topK } : {}),
      ...(request.topP !== undefined ? { topP: request.topP } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      logitBias: this.suppressed,
    };
    const speaker = request.speaker ? this.speakerBitmap(request.speaker) : undefined;
    // llama.cpp's own samplers, in the common sampler's order, as llama-tts samples the backbone's token
    const sampler = SamplerChain.create(this.model.vocab, this.model.trainedContextLength, settings, { fullVocabularyDraw: false });
    try {
      this.context.clearSequence(SPEECH_SEQ);
      try {
        this.generator.setInput({
          seq: SPEECH_SEQ, text: request.text, topK: settings.topK, topP: settings.topP, seed: settings.seed,
          ...(speaker ? { speaker } : {}), ...(request.language !== undefined ? { language: request.language } : {}),
        });
      } catch (error) {
        throw new EngineError("invalid_request", (error as Error).message);
      }
      const promptTokens = await this.decodePrompt();
      const usesToken = this.info.pipeline === "qwen3tts";
      // Pocket TTS's backbone gives no token: the helper reads only the hidden state
      const sample = () => (usesToken ? sampler.sample(this.context, -1) : -1);
      const window = STREAM_WINDOW_FRAMES[this.info.pipeline];
      let sampled = sample();
      let hidden: Pointer = this.context.embeddingsPointer(-1);
      let frames = 0;
      // frames the helper holds since it last decoded its window (it does so by itself when it fills)
      let windowFrames = 0;
      let sent = 0;
      let stop = false;
      let stoppedBy: SpeechResult["stoppedBy"] = "limit";
      const send = () => {
        const samples = this.generator.samplesAfter(sent);
        if (samples.length === 0) return;
        sent += samples.length;
        speech.emit({ type: "audio", samples });
      };
      while (!stop && frames < request.maxFrames) {
        await this.yieldToEvents();
        if (this.disposedReason !== undefined) throw new EngineError("engine_exited", this.disposedReason);
        if (speech.cancelled) {
          stoppedBy = "cancelled";
          break;
        }
        // a frame takes the next position of the sequence: where there is none, the speech ends
        if (this.context.lastPosition(SPEECH_SEQ) + 1 >= this.context.contextPerSequence) {
          stoppedBy = "context";
          break;
        }
        const reprompts = this.context.perf().promptTokens;
        const step = this.generator.stepFrame(sampled, hidden);
        stop = step.stop;
        if (!step.hidden) {
          stop = true;
          break;
        }
        hidden = step.hidden;
        sampled = sample();
        if (this.context.perf().promptTokens !== reprompts) {
          // Pocket TTS moved on to its next text chunk: the backbone took that chunk's text as a prompt
          // (several positions in one decode, where a frame takes one), no frame was made, and the helper
          // decoded what it held of the chunk before, starting a window of its own.
          windowFrames = 0;
          send();
          continue;
        }
        frames++;
        this.framesMade++;
        if (++windowFrames === window) {
          windowFrames = 0;
          send();
        }
      }
      if (stop) stoppedBy = "end";
      if (stoppedBy !== "cancelled") send();
      return { frames, samples: sent, promptTokens, stoppedBy };
    } finally {
      sampler.dispose();
      speaker?.dispose();
    }
  }

  /**
   * Decodes the speech's prompt (the pipeline's own, built from the text and the reference voice) and
   * returns its length. A prompt that leaves the context no room for a frame is refused as soon as its
   * length is known (after its first batch), before any audio.
   */
  private async decodePrompt(): Promise<number> {
    const room = this.context.contextPerSequence;
    const refuse = (positions: string) => new EngineError("context_overflow",
      `Cannot speak the input: its prompt takes ${positions} positions and the model's context has ${room}, which leaves no room for audio (shorten the input, or load the model with a larger context)`);
    for (;;) {
      let left: number;
      try {
        left = this.generator.stepPrompt(this.batchSize);
      } catch (error) {
        // a batch that runs past the context fails in llama_decode
        const decoded = this.context.lastPosition(SPEECH_SEQ) + 1;
        if (decoded + this.batchSize > room) throw refuse(`more than ${room}`);
        throw error;
      }
      const positions = this.context.lastPosition(SPEECH_SEQ) + 1 + left;
      if (positions >= room) throw refuse(String(positions));
      if (left === 0) return positions;
      await this.yieldToEvents();
      if (this.disposedReason !== undefined) throw new EngineError("engine_exited", this.disposedReason);
    }
  }

  private yieldToEvents(): Promise<void> {
    return new Promise((resolve) => setImmediate(resolve));
  }

  /** Fails what is queued; a running speech fails at its next frame (before the context it uses is freed). */
  dispose(reason: string): void {
    this.disposedReason = reason;
    for (const queued of this.queue.splice(0)) queued.emit({ type: "error", code: "engine_exited", message: reason });
    this.generator.dispose();
    this.projector.dispose();
  }
}
