// `llamux run MODEL [PROMPT]`: a one-shot streamed answer, or an interactive chat without a prompt.
// MODEL is a GGUF path, a stored model, or a name to pull. With a server answering at LLAMUX_HOST
// (or OLLAMA_HOST) the server runs the model; otherwise this process hosts the engine itself.
import { parseArgs } from "node:util";
import type { EngineOptions } from "../engine/types.ts";
import type { ChatBackend, ChatStats } from "./chat/backend.ts";
import { interactiveChat, extractImages, type SessionSettings } from "./chat/interactive.ts";
import { LocalChatBackend } from "./chat/local-backend.ts";
import { ServerChatBackend } from "./chat/server-backend.ts";
import { formatStats } from "./chat/verbose-stats.ts";
import { WordWrapWriter } from "./chat/word-wrap.ts";
import { ServerClient } from "./server-client.ts";
import { UsageError, numberOption } from "../usage-error.ts";
import { writeFile } from "node:fs/promises";
import { extname } from "node:path";
import type { SpeechFormat } from "../audio/speech/speech-encoder.ts";
import { MAX_SPEECH_SPEED, MIN_SPEECH_SPEED } from "../audio/speech/time-stretch.ts";
import { helpFlag, renderHelp, type Flags, type HelpPage } from "./help-layout.ts";

export const runFlags = {
  output: { type: "string", value: "FILE", help: "a text-to-speech model speaks PROMPT into FILE; its extension picks the format (.wav, .mp3, .flac, .opus or .ogg, .pcm: raw 16-bit little-endian mono)" },
  speed: { type: "string", value: "S", help: "with --output: 0.25 to 4, faster or slower speech at the same pitch (default 1)" },
  voice: { type: "string", value: "NAME", help: "with --output: a speaker file NAME.wav|.mp3|.flac in the model's folder or LLAMUX_VOICES (default ~/.llamux/voices); default the model's own voice" },
  format: { type: "string", value: "json", help: "answer in JSON" },
  verbose: { type: "boolean", help: "print timings and token counts after each answer" },
  keepalive: { type: "string", value: "D", help: "how long the model stays loaded after the answer (5m, 1h, 3600s; server only)" },
  nowordwrap: { type: "boolean", help: "do not wrap answers at the terminal's width" },
  insecure: { type: "boolean", help: "accepted as ollama run takes it; no effect" },
  think: { type: "string", value: "VALUE", help: "accepted as ollama run takes it; no effect (reasoning is always split off)" },
  "max-tokens": { type: "string", short: "n", value: "N", help: "most tokens to generate (num_predict; default until the model stops); with --output, the most audio frames (12.5 a second)" },
  temperature: { type: "string", value: "T", help: "sampling temperature; 0 is greedy" },
  "top-k": { type: "string", value: "N", help: "top-k sampling" },
  "top-p": { type: "string", value: "P", help: "nucleus sampling" },
  seed: { type: "string", value: "N", help: "sampling seed (default random)" },
  stop: { type: "string", multiple: true, value: "TEXT", help: "stop at TEXT (may be repeated)" },
  "ctx-size": { type: "string", value: "N", help: "context size in tokens (num_ctx; default 4096)" },
  threads: { type: "string", value: "N", help: "decode threads, fixed (default: up to the physical cores, fewer while other work holds cores)" },
  ...helpFlag,
} as const satisfies Flags;

export const runPage: HelpPage = {
  usage: ["llamux run MODEL [PROMPT] [options]"],
  description: `Answers PROMPT with MODEL, streaming the answer to standard output (with --output, a text-to-speech
model speaks PROMPT into a file instead); text piped to standard input is put before PROMPT. Without a
prompt (and with a terminal), starts an interactive chat: type /? there for its commands, Ctrl+C stops an
answer, Ctrl+D or /bye leaves.

MODEL is a GGUF file, a model in the store, or a name to pull first (hf.co/ORG/REPO[:QUANT], llama3.2).
When a server answers at LLAMUX_HOST (or OLLAMA_HOST, default 127.0.0.1:11434) it runs the model;
otherwise llamux loads the model itself.`,
  flags: runFlags,
};

export const runHelp = renderHelp(runPage);

/** The format an output file's extension names. */
const OUTPUT_FORMATS: Record<string, SpeechFormat> = { ".wav": "wav", ".mp3": "mp3", ".flac": "flac", ".opus": "opus", ".ogg": "opus", ".pcm": "pcm" };

function speechTarget(path: string, speedText: string | undefined): { path: string; format: SpeechFormat; speed: number } {
  const format = OUTPUT_FORMATS[extname(path).toLowerCase()];
  if (!format) throw new UsageError(`Cannot write speech to "${path}": name a .wav, .mp3, .flac, .opus (or .ogg) or .pcm file`);
  const speed = numberOption(speedText, "speed") ?? 1;
  if (!(speed >= MIN_SPEECH_SPEED && speed <= MAX_SPEECH_SPEED)) throw new UsageError(`--speed must be from ${MIN_SPEECH_SPEED} to ${MAX_SPEECH_SPEED}`);
  return { path, format, speed };
}

async function readStdin(): Promise<string> {
  return process.stdin.isTTY ? "" : await new Response(Bun.stdin.stream()).text();
}

async function openBackend(model: string, engine: Partial<EngineOptions>): Promise<ChatBackend> {
  const client = await ServerClient.connect();
  return client ? new ServerChatBackend(model, client) : LocalChatBackend.open(model, { engine });
}

function printStats(stats: ChatStats | undefined, verbose: boolean): void {
  if (stats && verbose) process.stderr.write(`${formatStats(stats)}\n`);
}

export async function runCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: runFlags });
  if (values.help) {
    console.log(runHelp);
    return 0;
  }
  if (positionals.length < 1) throw new UsageError("run needs a MODEL");
  if (values.format !== undefined && values.format !== "json") throw new UsageError(`Cannot use --format "${values.format}": only json is supported`);
  const options: Record<string, unknown> = {};
  const set = (name: string, value: unknown) => value !== undefined && (options[name] = value);
  set("num_predict", numberOption(values["max-tokens"], "max-tokens"));
  set("temperature", numberOption(values.temperature, "temperature"));
  set("top_k", numberOption(values["top-k"], "top-k"));
  set("top_p", numberOption(values["top-p"], "top-p"));
  set("seed", numberOption(values.seed, "seed"));
  set("num_ctx", numberOption(values["ctx-size"], "ctx-size"));
  set("num_thread", numberOption(values.threads, "threads"));
  if (values.stop) options.stop = values.stop;
  const engine: Partial<EngineOptions> = {};

  const [model, ...promptWords] = positionals as [string, ...string[]];
  const piped = await readStdin();
  const interactive = promptWords.length === 0 && !piped && process.stdin.isTTY === true;
  const settings: SessionSettings = {
    options, verbose: values.verbose === true, wordWrap: values.nowordwrap !== true && process.stdout.isTTY === true && !piped,
    ...(values.format === "json" ? { format: "json" as const } : {}), ...(values.keepalive !== undefined ? { keepAlive: values.keepalive } : {}),
  };

  const speech = values.output !== undefined ? speechTarget(values.output, values.speed) : undefined;
  if (!speech && (values.speed !== undefined || values.voice !== undefined)) throw new UsageError("--speed and --voice go with --output FILE");
  if (speech && promptWords.length === 0 && !piped) throw new UsageError("--output needs the text to speak: run MODEL \"TEXT\" --output FILE");
  const backend = await openBackend(model, engine);
  try {
    if (speech) {
      const controller = new AbortController();
      process.once("SIGINT", () => controller.abort());
      const text = [piped, ...promptWords].filter(Boolean).join(" ");
      const parts: Uint8Array[] = [];
      for await (const part of backend.speak({ text, format: speech.format, speed: speech.speed, options, ...(values.voice !== undefined ? { voice: values.voice } : {}), ...(settings.keepAlive !== undefined ? { keepAlive: settings.keepAlive } : {}) }, controller.signal)) parts.push(part);
      const bytes = Buffer.concat(parts);
      await writeFile(speech.path, bytes);
      process.stderr.write(`wrote ${bytes.length} bytes of ${speech.format} to ${speech.path}\n`);
      return 0;
    }
    if (interactive) {
      await backend.load(settings.keepAlive);
      return await interactiveChat(backend, settings);
    }
    const prompt = [piped, ...promptWords].filter(Boolean).join(" ");
    const { text, images, audio } = extractImages(prompt);
    const controller = new AbortController();
    process.once("SIGINT", () => controller.abort());
    const writer = new WordWrapWriter((chunk) => process.stdout.write(chunk), settings.wordWrap ? process.stdout.columns : undefined);
    let stats: ChatStats | undefined;
    for await (const event of backend.chat({
      messages: [{ role: "user", content: text }], images, ...(audio.length ? { audio } : {}), options,
      ...(settings.format ? { format: settings.format } : {}), ...(settings.keepAlive !== undefined ? { keepAlive: settings.keepAlive } : {}),
    }, controller.signal)) {
      if (event.type === "content") writer.push(event.text);
      else stats = event.stats;
    }
    writer.finish();
    process.stdout.write("\n");
    printStats(stats, settings.verbose);
    return 0;
  } finally {
    await backend.close();
  }
}
