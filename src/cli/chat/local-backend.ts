// `run` without a server: hosts the model's engine in a child process, as the server does, and runs
// each turn through the shared chat path with the model's template, system prompt and parameters.
import { existsSync, statSync } from "node:fs";
import { ModelManager } from "../../engine/model-manager.ts";
import type { EngineOptions } from "../../engine/types.ts";
import type { ModelHandle } from "../../generation/chat-spec.ts";
import { runChat } from "../../generation/run-chat.ts";
import { engineSettings } from "../../options/engine-settings.ts";
import { readOllamaOptions } from "../../options/ollama-names.ts";
import { mergeOptionValues, ollamaDefaults, type OptionValues } from "../../options/values.ts";
import { loadableModelPath } from "../../store/model-file.ts";
import { keepAliveMs } from "../../duration.ts";
import type { ResolvedModel } from "../../store/resolved-model.ts";
import { modelDetails, type ModelDetails } from "../model-details.ts";
import { openStore } from "../model-store-access.ts";
import { pullWithProgress } from "../pull.ts";
import type { ChatBackend, ChatStreamEvent, ChatTurn, SpeechTurn } from "./backend.ts";
import { dirname } from "node:path";
import { runSpeech } from "../../generation/run-speech.ts";
import { encodedSpeech } from "../../audio/speech/encoded-speech.ts";
import { resolveVoice } from "../../audio/voices.ts";
import { voicesDir } from "../../config.ts";
import { siblingProjector } from "../../vision/projector-file.ts";
import { imageFromBase64 } from "../../vision/image-source.ts";
import { audioFromBase64 } from "../../audio/audio-source.ts";

type RunnableModel = Pick<ResolvedModel, "name" | "modelPath" | "projectorPath" | "adapterPaths" | "template" | "system" | "parameters" | "messages" | "license" | "config">;

/** A GGUF path as a model with no layers of its own (and the mmproj-*.gguf beside it, if any). */
function fileModel(path: string): RunnableModel {
  const projectorPath = siblingProjector(path);
  return { name: path, modelPath: path, ...(projectorPath ? { projectorPath } : {}), adapterPaths: [], parameters: {}, messages: [], config: {} };
}

/** A path to a file, a stored model, or a name to pull first. */
export async function findRunnableModel(nameOrPath: string): Promise<RunnableModel> {
  if (existsSync(nameOrPath) && statSync(nameOrPath).isFile()) return fileModel(nameOrPath);
  if (/\.gguf$/i.test(nameOrPath) || nameOrPath.startsWith("./") || nameOrPath.startsWith("/")) {
    throw new Error(`Cannot find model "${nameOrPath}": no such file`);
  }
  const store = openStore();
  const stored = store.resolve(nameOrPath);
  if (stored) return stored;
  const pulled = await pullWithProgress(nameOrPath);
  return store.resolve(pulled)!;
}

export interface LocalBackendOptions {
  /** engine settings from the command line (threads, context) */
  engine?: Partial<EngineOptions>;
}

export class LocalChatBackend implements ChatBackend {
  private readonly manager = new ModelManager();
  private modelPath: string | undefined;

  private constructor(readonly model: string, private readonly resolved: RunnableModel, private readonly options: LocalBackendOptions) {
    this.manager.installShutdownHandlers();
  }

  static async open(nameOrPath: string, options: LocalBackendOptions = {}): Promise<LocalChatBackend> {
    return new LocalChatBackend(nameOrPath, await findRunnableModel(nameOrPath), options);
  }

  /** The model's seed conversation (Modelfile MESSAGE lines). */
  get seedMessages() {
    return this.resolved.messages;
  }

  /** The model's parameters under the turn's options (`/set parameter`), Ollama's defaults under both. */
  private optionsOf(turnOptions: Record<string, unknown>): OptionValues {
    return mergeOptionValues(ollamaDefaults(), readOllamaOptions(this.resolved.parameters, "parameters"), readOllamaOptions(turnOptions));
  }

  /** The model as the orchestrator loads it: this backend's engine manager, with the model's files and the turn's load options. */
  private handle(keepAlive?: string): ModelHandle {
    const ms = keepAlive === undefined ? Infinity : keepAliveMs(/^-?\d+$/.test(keepAlive) ? Number(keepAlive) : keepAlive);
    return {
      engine: async (load) => {
        this.modelPath ??= await loadableModelPath(this.resolved.modelPath);
        return this.manager.engine({
          modelPath: this.modelPath,
          parallel: 1,
          contextPerSequence: 4096,
          ...(this.resolved.adapterPaths.length ? { loraAdapters: this.resolved.adapterPaths } : {}),
          ...(this.resolved.projectorPath ? { projectorPath: this.resolved.projectorPath } : {}),
          ...this.options.engine,
          ...load,
        }, ms <= 0 ? Infinity : ms);
      },
    };
  }

  /** Speaks through the speech orchestrator on this process's engine, encoded as a whole file. */
  async *speak(turn: SpeechTurn, signal: AbortSignal): AsyncGenerator<Uint8Array> {
    const speaker = await resolveVoice(turn.voice, [dirname(this.resolved.modelPath), voicesDir()]);
    const maxFrames = turn.options.num_predict;
    const speech = await runSpeech(this.handle(turn.keepAlive), {
      text: turn.text, options: this.optionsOf(turn.options),
      ...(speaker ? { speaker } : {}), ...(typeof maxFrames === "number" && maxFrames > 0 ? { maxFrames } : {}),
    }, { signal });
    yield* encodedSpeech(speech.chunks, { format: turn.format, sampleRate: speech.sampleRate, speed: turn.speed, mode: "whole" });
  }

  async load(keepAlive?: string): Promise<void> {
    await this.handle(keepAlive).engine(engineSettings(this.optionsOf({})).load);
  }

  async *chat(turn: ChatTurn, signal: AbortSignal): AsyncGenerator<ChatStreamEvent> {
    const started = performance.now();
    let loaded = started;
    const model = this.handle(turn.keepAlive);
    // the turn's images belong to its last (user) message
    const images = turn.images.map(imageFromBase64);
    const audio = (turn.audio ?? []).map((clip) => audioFromBase64(clip));
    const media = { ...(images.length ? { images } : {}), ...(audio.length ? { audio } : {}) };
    const messages = images.length || audio.length ? turn.messages.map((m, i) => (i === turn.messages.length - 1 ? { ...m, ...media } : m)) : turn.messages;
    // the model's seed messages and SYSTEM come from its layers
    const { choices: [choice] } = await runChat({
      engine: async (load) => {
        const engine = await model.engine(load);
        loaded = performance.now();
        return engine;
      },
    }, {
      prompt: { kind: "conversation", messages, layers: this.resolved },
      output: { reasoning: false, ...(turn.format === "json" ? { constraint: { type: "json_object" } } : {}) },
      options: this.optionsOf(turn.options),
      limit: { overflow: "allow" },
    }, { signal });
    for await (const event of choice!.events()) {
      if (event.type === "content") yield { type: "content", text: event.text };
      else if (event.type === "error") throw new Error(event.message);
      else if (event.type === "done") {
        const u = event.usage;
        yield {
          type: "done",
          stats: {
            totalMs: performance.now() - started, loadMs: loaded - started, promptTokens: u.promptTokens, promptMs: u.promptMs,
            evalTokens: u.completionTokens, evalMs: u.decodeMs,
          },
        };
      }
    }
  }

  async details(): Promise<ModelDetails> {
    return modelDetails(this.resolved);
  }

  async close(): Promise<void> {
    await this.manager.stopAll();
  }
}
