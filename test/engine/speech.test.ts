// Speech output (text to speech) through the engine child process, against llama.cpp's own `llama-tts`
// built from the same pinned source: the tiny Qwen3-TTS backbone with its projector (code predictor,
// code2wav, speaker encoder) and the tiny Pocket TTS backbone with its projector (flow net, mimi
// decoder, voice encoder). Also: PCM streamed in chunks is the audio one read at the end gives,
// cancelling frees the sequence for the next speech, maxFrames bounds the length, bad speaker audio is
// a clear error, and a text model has no speech.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { Engine } from "../../src/engine/engine.ts";
import { EngineProcess } from "../../src/engine/engine-process.ts";
import { STREAM_WINDOW_FRAMES } from "../../src/engine/speech-runner.ts";
import { EngineError, type SpeechRequest, type SpeechResult } from "../../src/engine/types.ts";
import { AudioInputError } from "../../src/audio/audio-input-error.ts";
import { runSpeech } from "../../src/generation/run-speech.ts";
import { NoSpeechOutputError } from "../../src/generation/speech-spec.ts";
import type { ModelHandle } from "../../src/generation/chat-spec.ts";
import { ensureLlamaTool } from "../fixtures/llama-tools.ts";
import { speechWavPath } from "../audio/audio-fixtures.ts";

const SAMPLES_PER_FRAME = 1920;
const CONTEXT = 2048;
const dir = mkdtempSync(join(tmpdir(), "llamux-speech-"));
let backbone: string;
let projector: string;
let pocketBackbone: string;
let pocketProjector: string;
let speech: EngineProcess;
let pocket: EngineProcess;
let text: EngineProcess;

beforeAll(async () => {
  [backbone, projector, pocketBackbone, pocketProjector] = await Promise.all([
    ensureModel("tiny-qwen3tts"), ensureModel("tiny-qwen3tts-mmproj"), ensureModel("tiny-pockettts"), ensureModel("tiny-pockettts-mmproj"),
  ]);
  [speech, pocket, text] = await Promise.all([
    EngineProcess.start({ modelPath: backbone, projectorPath: projector, contextPerSequence: CONTEXT, threads: 2, batchSize: 64 }),
    EngineProcess.start({ modelPath: pocketBackbone, projectorPath: pocketProjector, contextPerSequence: CONTEXT, threads: 2, batchSize: 64 }),
    EngineProcess.start({ modelPath: await ensureModel("tiny-llama"), parallel: 1, contextPerSequence: 512, threads: 1 }),
  ]);
}, 600_000);

afterAll(async () => {
  await Promise.all([speech?.stop(), pocket?.stop(), text?.stop()]);
});

const handleOf = (engine: EngineProcess): ModelHandle => ({ engine: async () => engine });

/** All chunks of a speech and its result. */
async function spoken(request: SpeechRequest, engine: EngineProcess = speech) {
  const stream = engine.speak(request);
  const chunks: Float32Array[] = [];
  for await (const chunk of stream.chunks) chunks.push(chunk);
  return { chunks, samples: concat(chunks), result: await stream.done };
}

function concat(chunks: Float32Array[]): Float32Array {
  const out = new Float32Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** The samples of llama-tts's 16-bit WAV output. */
function wavSamples(path: string): Int16Array {
  const bytes = readFileSync(path);
  let at = 12;
  while (at + 8 <= bytes.length) {
    const id = bytes.toString("ascii", at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    if (id === "data") return new Int16Array(bytes.buffer.slice(bytes.byteOffset + at + 8, bytes.byteOffset + at + 8 + size));
    at += 8 + size;
  }
  throw new Error(`no data chunk in ${path}`);
}

/** Float PCM as llama-tts writes it to WAV (mtmd-helper-gen.cpp write_wav16): clamped, scaled, truncated. */
const toInt16 = (samples: Float32Array) => Int16Array.from(samples, (v) => Math.trunc(Math.max(-1, Math.min(1, v)) * 32767));

/** llama-tts's samples of each request, made once: the library sets' tests ask for the same ones. */
const oracles = new Map<string, Promise<Int16Array>>();

function oracle(request: SpeechRequest, speakerPath?: string, model: [string, string] = [backbone, projector]): Promise<Int16Array> {
  const key = JSON.stringify({ request, speakerPath, model });
  if (!oracles.has(key)) oracles.set(key, runOracle(request, join(dir, `oracle-${Bun.hash(key)}.wav`), speakerPath, model));
  return oracles.get(key)!;
}

async function runOracle(request: SpeechRequest, out: string, speakerPath: string | undefined, model: [string, string]): Promise<Int16Array> {
  const tts = await ensureLlamaTool("llama-tts");
  const args = [tts, "-m", model[0], "-mm", model[1], "-p", request.text, "-o", out, "-n", String(request.maxFrames),
    "--seed", String(request.seed), "--top-k", String(request.topK), "--top-p", String(request.topP), "--temp", String(request.temperature),
    "-t", "2", "-c", String(CONTEXT), "-b", "64", ...(speakerPath ? ["--tts-speaker-file", speakerPath] : [])];
  const child = Bun.spawn(args, { stdout: "pipe", stderr: "pipe" });
  const [stderr, exitCode] = await Promise.all([new Response(child.stderr).text(), child.exited]);
  if (exitCode !== 0) throw new Error(`llama-tts failed (${exitCode}): ${stderr.slice(-2000)}`);
  return wavSamples(out);
}

/** Largest difference between two 16-bit signals of the same length. */
function maxDifference(a: Int16Array, b: Int16Array): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

/** How far below the signal `b` its difference from `a` is, in dB (RMS over RMS). */
function differenceBelowSignal(a: Int16Array, b: Int16Array): number {
  let signal = 0;
  let difference = 0;
  for (let i = 0; i < a.length; i++) {
    signal += b[i]! ** 2;
    difference += (a[i]! - b[i]!) ** 2;
  }
  return difference === 0 ? Infinity : 10 * Math.log10(signal / difference);
}

interface LibrarySet {
  dir: string;
  variant: string;
  /** Most steps of 16-bit audio between llamux's samples and llama-tts's. */
  steps: number;
}

/** The difference from llama-tts's samples stays this far below the signal (RMS, dB), whatever the libraries. */
const BELOW_SIGNAL_DB = 60;

/**
 * A llama.cpp library set and how close llamux's speech on it is to llama-tts's (docs/images-audio-speech.md, Speech).
 * llama-tts (.native/oracles) is built from the pinned source for this CPU: on libraries built the same
 * way (`make llama-from-source`, VARIANT "<platform>-source-cpu") llamux's samples are its samples
 * within 1 step. The CPU libraries llamux ships (prebuilt, portable) run other kernels for the same
 * operations, and the same speech (same codes, same length) may differ by more steps as it goes on.
 */
function librarySet(dir: string): LibrarySet {
  const variant = readFileSync(join(dir, "VARIANT"), "utf8").trim();
  return { dir, variant, steps: variant.includes("-source-") ? 1 : 24 };
}

const NATIVE = join(import.meta.dir, "..", "..", ".native");
/** The set the engines of this file load. */
const ENGINE_LIBRARIES = librarySet(process.env.LLAMUX_LIB_DIR ?? join(NATIVE, "lib"));
/** Every set found here: the engines' own, the prebuilt set a source build keeps aside, a portable build. */
const LIBRARY_SETS = ["lib", "lib-prebuilt", "lib-portable"]
  .map((name) => join(NATIVE, name))
  .filter((dir) => existsSync(join(dir, "VARIANT")))
  .map(librarySet);

/** llamux's float samples against llama-tts's 16-bit ones: the same length, and as close as the library set allows. */
function expectLlamaTtsSamples(mine: Float32Array, theirs: Int16Array, libraries: LibrarySet = ENGINE_LIBRARIES): void {
  expect(mine.length).toBe(theirs.length);
  const ours = toInt16(mine);
  expect(maxDifference(ours, theirs)).toBeLessThanOrEqual(libraries.steps);
  expect(differenceBelowSignal(ours, theirs)).toBeGreaterThanOrEqual(BELOW_SIGNAL_DB);
}

/** An engine of the Pocket TTS model on a library set (the child loads LLAMUX_LIB_DIR's libraries). */
async function pocketOn(libraryDir: string): Promise<EngineProcess> {
  const before = process.env.LLAMUX_LIB_DIR;
  process.env.LLAMUX_LIB_DIR = libraryDir;
  // the child's environment is copied when it is spawned, at once
  const starting = EngineProcess.start({ modelPath: pocketBackbone, projectorPath: pocketProjector, contextPerSequence: CONTEXT, threads: 2, batchSize: 64 });
  if (before === undefined) delete process.env.LLAMUX_LIB_DIR;
  else process.env.LLAMUX_LIB_DIR = before;
  return starting;
}

const base: SpeechRequest = { text: "Hello there, this is a test of speech.", seed: 42, topK: 20, topP: 0.9, temperature: 0.7, maxFrames: 80 };

// llama-tts runs its projector on 4 threads whatever -t says: built without OpenMP (the benchmarks' copy in
// .native/tools) it makes a frame in seconds on 2 busy cores, so the comparisons take a few frames. The
// decode windows (72 and 8 frames) are checked without it, against one read at the end.
const short: SpeechRequest = { ...base, maxFrames: 3 };

/**
 * A text Pocket TTS speaks in two chunks: past 50 tokens it splits where its reference does (after "?",
 * "!..."; this vocabulary's "." and "," are not among them). The first chunk (3 tokens) ends at its
 * budget of 38 frames at the latest; 14 frames of the second follow, a window and part of one.
 */
const twoChunks: SpeechRequest = {
  ...base,
  text: "Ready? This second sentence goes on and on for long enough that it cannot share one chunk of fifty tokens with the short " +
    "question before it and so the speech model has to start a new chunk of its own right here in the middle of the text",
  maxFrames: 52,
};

describe("Qwen3-TTS against llama-tts", () => {
  test("the model reports its pipeline and rate", () => {
    expect(speech.info.speech).toEqual({ pipeline: "qwen3tts", sampleRate: 24000 });
    expect(speech.info.sequences).toBe(1);
  });

  test("the same text, seed and sampling give llama-tts's samples", async () => {
    const [mine, theirs] = await Promise.all([spoken(short), oracle(short)]);
    expect(mine.result.promptTokens).toBeGreaterThan(10);
    expect(mine.samples.length).toBe(mine.result.samples);
    expectLlamaTtsSamples(mine.samples, theirs);
  }, 900_000);

  test("a speaker reference (a WAV) conditions the voice as in llama-tts", async () => {
    const wav = speechWavPath("A reference voice for the speaker encoder.");
    const request = { ...short, maxFrames: 2, speaker: new Uint8Array(readFileSync(wav)) };
    const [mine, theirs] = await Promise.all([spoken(request), oracle(request, wav)]);
    expectLlamaTtsSamples(mine.samples, theirs);
    const plain = await spoken({ ...short, maxFrames: 2 });
    expect(maxDifference(toInt16(plain.samples), toInt16(mine.samples))).toBeGreaterThan(1);
  }, 900_000);
});

describe("Pocket TTS against llama-tts", () => {
  test("the model reports its pipeline, rate and variant", () => {
    expect(pocket.info.speech).toEqual({ pipeline: "pockettts", sampleRate: 24000, variant: "english" });
  });

  test("the same text and seed give llama-tts's samples", async () => {
    const [mine, theirs] = await Promise.all([spoken(short, pocket), oracle(short, undefined, [pocketBackbone, pocketProjector])]);
    expectLlamaTtsSamples(mine.samples, theirs);
  }, 900_000);

  // The speech ends at the frames asked for, 14 frames into the second chunk: past the step that changes
  // chunks (it makes no frame) and past a whole decode window after it.
  test.each(LIBRARY_SETS)("a text of two chunks gives llama-tts's samples after the chunk change too (libraries: $variant)", async (libraries) => {
    const engine = await pocketOn(libraries.dir);
    try {
      // llama-tts counts the step into the second chunk as a frame: it is asked for one more to make as many
      const [mine, theirs] = await Promise.all([
        spoken(twoChunks, engine), oracle({ ...twoChunks, maxFrames: twoChunks.maxFrames + 1 }, undefined, [pocketBackbone, pocketProjector]),
      ]);
      expect(mine.result.frames).toBe(twoChunks.maxFrames);
      expect(mine.samples.length).toBe(mine.result.frames * SAMPLES_PER_FRAME);
      expectLlamaTtsSamples(mine.samples, theirs, libraries);
    } finally {
      await engine.stop();
    }
  }, 1_800_000);

  test("a reference voice (a WAV) primes the backbone as in llama-tts", async () => {
    const wav = speechWavPath("A reference voice for the speaker encoder.");
    const withVoice = { ...short, maxFrames: 2, speaker: new Uint8Array(readFileSync(wav)) };
    const [mine, theirs] = await Promise.all([spoken(withVoice, pocket), oracle(withVoice, wav, [pocketBackbone, pocketProjector])]);
    expectLlamaTtsSamples(mine.samples, theirs);
    expect(mine.result.promptTokens).toBeGreaterThan((await spoken({ ...short, maxFrames: 1 }, pocket)).result.promptTokens);
  }, 900_000);
});

describe("streaming", () => {
  // One engine in this process, so the test can read its PCM once at the end instead (a window longer
  // than the speech) and compare.
  async function windowedAndOnce(model: "tiny-qwen3tts" | "tiny-pockettts", request: SpeechRequest) {
    const engine = Engine.load({ modelPath: await ensureModel(model), projectorPath: await ensureModel(`${model}-mmproj`), contextPerSequence: CONTEXT, threads: 2, batchSize: 64 });
    const pipeline = engine.info.speech!.pipeline;
    const window = STREAM_WINDOW_FRAMES[pipeline];
    const run = (id: string) => new Promise<{ chunks: Float32Array[]; result: SpeechResult }>((resolve, reject) => {
      const chunks: Float32Array[] = [];
      engine.speak(id, request, (event) => {
        if (event.type === "audio") chunks.push(event.samples);
        else if (event.type === "end") resolve({ chunks, result: event.result });
        else reject(new Error(event.message));
      });
    });
    try {
      const { chunks: windowed, result } = await run("windowed");
      STREAM_WINDOW_FRAMES[pipeline] = Number.MAX_SAFE_INTEGER;
      const { chunks: once } = await run("once");
      return { windowed, once, window, result };
    } finally {
      STREAM_WINDOW_FRAMES[pipeline] = window;
      engine.dispose();
    }
  }

  test("Qwen3-TTS: chunks every 72 frames (code2wav's window) are exactly the samples of one read at the end", async () => {
    const { windowed, once, window } = await windowedAndOnce("tiny-qwen3tts", { ...base, maxFrames: 80 });
    expect(windowed.map((c) => c.length)).toEqual([window * SAMPLES_PER_FRAME, (80 - window) * SAMPLES_PER_FRAME]);
    expect(once).toHaveLength(1);
    expect(concat(windowed)).toEqual(once[0]!);
  }, 900_000);

  test("Pocket TTS: chunks every 8 frames (the mimi decoder's window) are exactly the samples of one read at the end", async () => {
    const { windowed, once } = await windowedAndOnce("tiny-pockettts", { ...base, maxFrames: 20 });
    expect(windowed.map((c) => c.length)).toEqual([8 * SAMPLES_PER_FRAME, 8 * SAMPLES_PER_FRAME, 4 * SAMPLES_PER_FRAME]);
    expect(concat(windowed)).toEqual(once[0]!);
  }, 900_000);

  test("Pocket TTS, a text of two chunks: the windows start again at the chunk change, the audio is one read at the end's, and the frames reported are the audio's", async () => {
    const { windowed, once, result } = await windowedAndOnce("tiny-pockettts", twoChunks);
    // (read at the chunk change too, where the helper holds no frame: that read decodes nothing early)
    expect(concat(windowed)).toEqual(concat(once));
    expect(result.stoppedBy).toBe("limit");
    expect(result.frames).toBe(twoChunks.maxFrames);
    expect(result.samples).toBe(result.frames * SAMPLES_PER_FRAME);
    // the first chunk's last window is short, then the second chunk's windows are whole again
    const lengths = windowed.map((c) => c.length / SAMPLES_PER_FRAME);
    expect(lengths.some((frames) => frames < 8)).toBe(true);
    expect(lengths.slice(lengths.findIndex((frames) => frames < 8) + 1, -1).every((frames) => frames === 8)).toBe(true);
  }, 900_000);
});

describe("bounds and cancellation", () => {
  test("maxFrames bounds the length", async () => {
    const { result, samples } = await spoken({ ...base, maxFrames: 5 });
    expect(result.frames).toBeLessThanOrEqual(5);
    if (result.stoppedBy === "limit") expect(result.frames).toBe(5);
    expect(samples.length).toBe(result.frames * SAMPLES_PER_FRAME);
  }, 300_000);

  test("aborting mid-stream stops the speech between frames; the next speech runs", async () => {
    const controller = new AbortController();
    const stream = speech.speak({ ...base, maxFrames: 4096 }, { signal: controller.signal });
    const chunks: Float32Array[] = [];
    for await (const chunk of stream.chunks) {
      chunks.push(chunk);
      controller.abort();
    }
    const result = await stream.done;
    expect(result.stoppedBy).toBe("cancelled");
    expect(result.frames).toBeLessThan(4096);
    expect(chunks.length).toBe(1);
    const next = await spoken({ ...base, maxFrames: 3 });
    expect(next.result.frames).toBeGreaterThan(0);
    expect(next.samples.length).toBe(next.result.frames * SAMPLES_PER_FRAME);
  }, 300_000);

  test("a speech ends where the context does, its audio kept; a prompt that leaves no room is refused before any audio", async () => {
    // 256 positions; one digit is one token of this vocabulary: 230 digits make a prompt of 240
    const small = await EngineProcess.start({ modelPath: backbone, projectorPath: projector, contextPerSequence: 256, threads: 2, batchSize: 64 });
    const digits = (count: number) => "0123456789".repeat(40).slice(0, count);
    try {
      const { result, samples, chunks } = await spoken({ ...base, text: digits(230), maxFrames: 4096 }, small);
      expect(result.stoppedBy).toBe("context");
      expect(result.promptTokens + result.frames).toBe(256);
      expect(result.frames).toBeGreaterThan(0);
      expect(samples.length).toBe(result.frames * SAMPLES_PER_FRAME);
      expect(chunks.length).toBeGreaterThan(0);

      const stream = small.speak({ ...base, text: digits(300), maxFrames: 4 });
      const received: Float32Array[] = [];
      const error = await (async () => {
        for await (const chunk of stream.chunks) received.push(chunk);
      })().catch((e: unknown) => e);
      expect(received).toHaveLength(0);
      expect(error).toBeInstanceOf(EngineError);
      expect((error as EngineError).code).toBe("context_overflow");
      expect((error as Error).message).toMatch(/its prompt takes 310 positions and the model's context has 256/);
      // the next speech runs
      expect((await spoken({ ...base, maxFrames: 2 }, small)).result.frames).toBe(2);
    } finally {
      await small.stop();
    }
  }, 600_000);

  test("speaker bytes that are not audio are refused before the engine, and by the engine", async () => {
    const notAudio = new TextEncoder().encode("this is not a WAV file at all");
    await expect(runSpeech(handleOf(speech), { text: "Hi", speaker: notAudio, options: { seed: 1 } })).rejects.toBeInstanceOf(AudioInputError);
    const stream = speech.speak({ ...base, maxFrames: 2, speaker: notAudio });
    const error = await stream.done.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).code).toBe("invalid_request");
    expect((error as Error).message).toContain("speaker reference audio");
  }, 120_000);

  test("text generation on a speech model is refused", async () => {
    const events = [];
    for await (const event of speech.generate({ prompt: "Hello", maxTokens: 2 })) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: "error", code: "invalid_request" });
  });
});

describe("runSpeech", () => {
  test("speaks through the option table's seed and sampling", async () => {
    const running = await runSpeech(handleOf(speech), { text: base.text, options: { seed: 42, topK: 20, topP: 0.9, temperature: 0.7 }, maxFrames: 4 });
    expect(running.sampleRate).toBe(24000);
    const chunks: Float32Array[] = [];
    for await (const chunk of running.chunks) chunks.push(chunk);
    const same = await spoken({ ...base, maxFrames: 4 });
    expect(concat(chunks)).toEqual(same.samples);
    expect((await running.done).frames).toBe(same.result.frames);
  }, 300_000);

  test("a text model has no speech output", async () => {
    expect(text.info.speech).toBeUndefined();
    await expect(runSpeech(handleOf(text), { text: "Hi", options: {} })).rejects.toBeInstanceOf(NoSpeechOutputError);
    const error = await text.speak({ ...base, maxFrames: 2 }).done.catch((e: unknown) => e);
    expect((error as EngineError).code).toBe("invalid_request");
  });

  test("an empty text or a frame limit out of range is an option error", async () => {
    await expect(runSpeech(handleOf(speech), { text: "", options: {} })).rejects.toMatchObject({ name: "OptionError", field: "input" });
    await expect(runSpeech(handleOf(speech), { text: "Hi", options: {}, maxFrames: 0 })).rejects.toMatchObject({ name: "OptionError", field: "max_frames" });
  });
});
