// Text to speech through libmtmd's audio-generation helper (mtmd-helper.h, mtmd_helper_gen_audio_*): the
// backbone's context and the projector's generation head, driven one frame at a time as llama-tts does.
// The helper calls llama_decode on the context itself, into the sequence it is given; it copies what it
// needs of its input (text, language) when the speech starts.
import { ptr, toArrayBuffer, type Pointer } from "bun:ffi";
import { withLlamaError } from "./native.ts";
import { NativeHandle } from "./disposable.ts";
import { asPointer } from "./pointer.ts";
import { cstr, readCString } from "./strings.ts";
import type { MtmdNative } from "./symbols.ts";
import type { MtmdBitmap } from "./mtmd-chunks.ts";
import type { LlamaContext } from "./context.ts";

/** mtmd_gen_audio_type, by value. */
const PIPELINES: Record<number, SpeechPipeline> = { 1: "qwen3tts", 2: "pockettts" };

export type SpeechPipeline = "qwen3tts" | "pockettts";

export interface GeneratedAudioInfo {
  pipeline: SpeechPipeline;
  sampleRate: number;
  variant: string | undefined;
}

/** What a projector generates (mtmd_gen_audio_get_info); undefined when it generates no audio. */
export function generatedAudioInfo(n: MtmdNative, projector: Pointer): GeneratedAudioInfo | undefined {
  const rate = new Int32Array(1);
  const variant = new BigUint64Array(1);
  const type = n.shim.llamux_gen_audio_info(projector, ptr(rate), ptr(variant));
  const pipeline = PIPELINES[type];
  if (!pipeline) return undefined;
  const name = variant[0] ? readCString(Number(variant[0]) as Pointer) : undefined;
  return { pipeline, sampleRate: rate[0]!, variant: name || undefined };
}

export interface SpeechInput {
  seq: number;
  text: string;
  speaker?: MtmdBitmap;
  /** A language name or code the pipeline knows; unset: its default. */
  language?: string;
  /** For the projector's own sampling (Qwen3-TTS's code predictor); 0 takes its default. */
  topK: number;
  topP: number;
  seed: number;
}

/** One frame step: `stop` when the speech ended; `hidden` the backbone's next hidden state (null: no frame). */
export interface FrameStep {
  stop: boolean;
  hidden: Pointer | null;
}

export class AudioGenerator extends NativeHandle {
  private readonly stateOut = new BigUint64Array(1);
  private readonly stopOut = new Uint8Array(1);

  private constructor(private readonly n: MtmdNative, pointer: Pointer, private readonly projector: Pointer, private readonly embeddingSize: number) {
    super(pointer, "audio generator");
  }

  /** `embeddingSize`: the backbone's hidden size. */
  static create(n: MtmdNative, context: LlamaContext, projector: Pointer, embeddingSize: number): AudioGenerator {
    const pointer = asPointer(n.mtmd.mtmd_helper_gen_audio_init(context.pointer, projector));
    if (!pointer) throw new Error("Cannot start audio generation: libmtmd returned no generator");
    return new AudioGenerator(n, pointer, projector, embeddingSize);
  }

  protected free(pointer: Pointer): void {
    this.n.mtmd.mtmd_helper_gen_audio_free(pointer);
  }

  /**
   * Starts a speech: builds its prompt (and encodes the speaker reference); throws with libmtmd's reason.
   * The projector's random draws start from the seed, as in a process that speaks once.
   */
  setInput(input: SpeechInput): void {
    const reseeded = withLlamaError(() => this.n.shim.llamux_gen_audio_prepare_seed(this.projector, this.embeddingSize, input.seed >>> 0));
    if (reseeded.result !== 0) throw new Error(`Cannot start speech: ${reseeded.error ?? `libmtmd returned ${reseeded.result}`}`);
    const text = Buffer.from(input.text, "utf8");
    const textBytes = new Uint8Array(text.length + 1);
    textBytes.set(text);
    const language = input.language !== undefined ? cstr(input.language) : null;
    const { result: status, error } = withLlamaError(() => this.n.shim.llamux_gen_audio_set_input(
      this.handle, input.seq, ptr(textBytes), text.length, input.speaker ? input.speaker.pointer : null,
      language ? ptr(language) : null, input.topK, input.topP, input.seed >>> 0));
    if (status !== 0) throw new Error(`Cannot start speech: ${error ?? `libmtmd returned ${status}`}`);
  }

  /** Decodes up to `batch` prompt positions; returns how many are left (0: the prompt is done). */
  stepPrompt(batch: number): number {
    const { result: left, error } = withLlamaError(() => this.n.mtmd.mtmd_helper_gen_audio_step_prompt(this.handle, batch));
    if (left < 0) throw new Error(`Cannot decode the speech prompt: ${error ?? `libmtmd returned ${left}`}`);
    return left;
  }

  /**
   * Generates one frame from the backbone's token (`sampled`; -1 for a pipeline without one) and hidden
   * state, and decodes its embedding into the backbone. The hidden state it returns is valid until the
   * next step.
   */
  stepFrame(sampled: number, hidden: Pointer): FrameStep {
    this.stateOut[0] = 0n;
    this.stopOut[0] = 0;
    const { result: status, error } = withLlamaError(() =>
      this.n.mtmd.mtmd_helper_gen_audio_step_gen(this.handle, sampled, hidden, ptr(this.stateOut), ptr(this.stopOut)));
    if (status !== 0) throw new Error(`Cannot generate an audio frame: ${error ?? `libmtmd returned ${status}`}`);
    return { stop: this.stopOut[0] !== 0, hidden: this.stateOut[0] ? (Number(this.stateOut[0]) as Pointer) : null };
  }

  /**
   * The PCM samples after the first `from`, copied. The helper decodes buffered frames first, then
   * returns all the audio of the speech so far.
   */
  samplesAfter(from: number): Float32Array {
    const rate = new Int32Array(1);
    const data = new BigUint64Array(1);
    const bytes = new BigUint64Array(1);
    const count = new BigInt64Array(1);
    const { result: status, error } = withLlamaError(() =>
      this.n.mtmd.mtmd_helper_gen_audio_get_output(this.handle, ptr(rate), ptr(data), ptr(bytes), ptr(count)));
    if (status !== 0) throw new Error(`Cannot decode audio frames: ${error ?? `libmtmd returned ${status}`}`);
    const total = Number(count[0]);
    if (total <= from || !data[0]) return new Float32Array(0);
    return new Float32Array(toArrayBuffer(Number(data[0]) as Pointer, from * 4, (total - from) * 4).slice(0));
  }

  /** Drops the speech's state (not its sequence's memory: the caller clears that). */
  reset(): void {
    this.n.mtmd.mtmd_helper_gen_audio_reset(this.handle);
  }
}
