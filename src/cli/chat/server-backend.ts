// `run` against a running server: /api/generate to load, /api/chat to answer, /api/pull when the
// server does not have the model yet, as `ollama run` does.
import type { PullProgress } from "../../store/pull-progress.ts";
import { modelDetails, type ModelDetails } from "../model-details.ts";
import { openStore } from "../model-store-access.ts";
import { type ServerClient, ServerError } from "../server-client.ts";
import { terminalProgress } from "../terminal/progress-bar.ts";
import type { ChatBackend, ChatStreamEvent, ChatTurn, SpeechTurn } from "./backend.ts";
import { findRunnableModel } from "./local-backend.ts";

interface ChatChunk {
  message?: { content?: string };
  done?: boolean;
  total_duration?: number;
  load_duration?: number;
  prompt_eval_count?: number;
  prompt_eval_duration?: number;
  eval_count?: number;
  eval_duration?: number;
}

const ms = (ns: number | undefined) => (ns ?? 0) / 1e6;

export class ServerChatBackend implements ChatBackend {
  constructor(readonly model: string, private readonly client: ServerClient) {}

  /** The server's /v1/audio/speech, asked for a whole file. */
  async *speak(turn: SpeechTurn, signal: AbortSignal): AsyncGenerator<Uint8Array> {
    const { num_predict: maxFrames, seed, temperature, top_k, top_p } = turn.options;
    const sampling = Object.fromEntries(Object.entries({ seed, temperature, top_k, top_p }).filter(([, value]) => value !== undefined));
    const response = await this.client.request("POST", "/v1/audio/speech", {
      model: this.model, input: turn.text, response_format: turn.format, speed: turn.speed,
      ...(turn.voice !== undefined ? { voice: turn.voice } : {}), ...(maxFrames !== undefined ? { max_frames: maxFrames } : {}), ...sampling,
    }, signal);
    yield new Uint8Array(await response.arrayBuffer());
  }

  async load(keepAlive?: string): Promise<void> {
    const request = { model: this.model, ...(keepAlive !== undefined ? { keep_alive: keepAliveValue(keepAlive) } : {}) };
    try {
      await this.client.post("/api/generate", request);
    } catch (error) {
      if (!(error instanceof ServerError && error.status === 404)) throw error;
      await this.pull();
      await this.client.post("/api/generate", request);
    }
  }

  private async pull(): Promise<void> {
    const progress = terminalProgress();
    try {
      for await (const event of this.client.stream<PullProgress>("/api/pull", { model: this.model, stream: true })) progress.onProgress(event);
    } finally {
      progress.finish();
    }
  }

  async *chat(turn: ChatTurn, signal: AbortSignal): AsyncGenerator<ChatStreamEvent> {
    // audio travels in llamux's /api/chat extension field, beside Ollama's images
    const media = { ...(turn.images.length ? { images: turn.images } : {}), ...(turn.audio?.length ? { audio: turn.audio } : {}) };
    const messages = turn.messages.map((message, i) => (i === turn.messages.length - 1 ? { ...message, ...media } : message));
    const body = {
      model: this.model, messages, options: turn.options, stream: true,
      ...(turn.format ? { format: turn.format } : {}), ...(turn.keepAlive !== undefined ? { keep_alive: keepAliveValue(turn.keepAlive) } : {}),
    };
    for await (const chunk of this.client.stream<ChatChunk>("/api/chat", body, signal)) {
      if (chunk.message?.content) yield { type: "content", text: chunk.message.content };
      if (chunk.done) {
        yield {
          type: "done",
          stats: {
            totalMs: ms(chunk.total_duration), loadMs: ms(chunk.load_duration), promptTokens: chunk.prompt_eval_count ?? 0,
            promptMs: ms(chunk.prompt_eval_duration), evalTokens: chunk.eval_count ?? 0, evalMs: ms(chunk.eval_duration),
          },
        };
      }
    }
  }

  async details(): Promise<ModelDetails> {
    const stored = openStore().resolve(this.model);
    return modelDetails(stored ?? (await findRunnableModel(this.model)));
  }

  async close(): Promise<void> {}
}

/** A bare number of seconds goes over the wire as a number; anything else as the duration text. */
function keepAliveValue(value: string): number | string {
  return /^-?\d+$/.test(value) ? Number(value) : value;
}
