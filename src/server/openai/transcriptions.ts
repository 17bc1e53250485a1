// POST /v1/audio/transcriptions (profiles a and b, as Ollama and vLLM serve it): a multipart upload
// (`file`, `model`, `prompt`, `language`, `response_format` json | text, `temperature`) turned into one
// chat turn — the audio and an instruction — through the shared chat path, answered as OpenAI's
// {text, usage} or as plain text.
import type { Context } from "hono";
import { runChat } from "../../generation/run-chat.ts";
import { mergeOptionValues } from "../../options/values.ts";
import type { ChatMessage } from "../../chat/types.ts";
import { badRequest } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";
import { modelOptions, serverRun, servedModel } from "../chat-request.ts";
import { uploadedAudio } from "../request-audio.ts";
import { audioSeconds } from "../../audio/audio-duration.ts";

/** Most tokens one transcription may generate (a 5-minute clip is well under 1,000 words). */
export const MAX_TRANSCRIPTION_TOKENS = 2048;
/** Tokens a transcript may take per second of audio (speech runs at about 3 words, 4 tokens, a second). */
export const TRANSCRIPTION_TOKENS_PER_SECOND = 8;

/** The generation bound for a clip: 64 tokens plus 8 a second where the header tells its length (WAV, FLAC), else the maximum. */
export function transcriptionTokens(audio: Uint8Array): number {
  const seconds = audioSeconds(audio);
  if (seconds === undefined) return MAX_TRANSCRIPTION_TOKENS;
  return Math.min(MAX_TRANSCRIPTION_TOKENS, 64 + Math.ceil(seconds * TRANSCRIPTION_TOKENS_PER_SECOND));
}

/** A multipart form as Request.formData() gives it (Bun's and undici's FormData types differ). */
type Form = Awaited<ReturnType<Request["formData"]>>;

function field(form: Form, name: string): string | undefined {
  const value = form.get(name);
  if (value === null) return undefined;
  if (typeof value !== "string") throw badRequest(`"${name}" must be a text field`, name);
  return value;
}

/** The instruction beside the audio: what OpenAI's `language` and `prompt` mean, said to a chat model. */
export function transcriptionInstruction(language: string | undefined, prompt: string | undefined): string {
  return [
    `Transcribe this audio${language ? ` (language: ${language})` : ""}. Answer with the transcript only.`,
    ...(prompt ? [`Context, spelling and style to follow: ${prompt}`] : []),
  ].join("\n");
}

export function transcriptions(deps: ServerDeps) {
  return async function transcriptionsHandler(c: Context) {
    const arrived = performance.now();
    if (!(c.req.header("content-type") ?? "").toLowerCase().startsWith("multipart/form-data")) {
      throw badRequest("A transcription request is multipart/form-data with a `file` and a `model`", "file");
    }
    let form: Form;
    try {
      form = await c.req.raw.formData();
    } catch (error) {
      throw badRequest(`Cannot read the multipart form: ${(error as Error).message}`, "file");
    }
    const file = form.get("file");
    if (!(file instanceof Blob)) throw badRequest('"file" is required: an audio file (wav, mp3 or flac)', "file");
    const responseFormat = field(form, "response_format") ?? "json";
    if (responseFormat !== "json" && responseFormat !== "text") {
      throw badRequest(`response_format "${responseFormat}" is not supported: use json or text`, "response_format");
    }
    const temperatureText = field(form, "temperature");
    const temperature = temperatureText === undefined ? 0 : Number(temperatureText);
    if (!Number.isFinite(temperature) || temperature < 0 || temperature > 2) throw badRequest("temperature must be a number from 0 to 2", "temperature");

    const model = deps.models.resolve(field(form, "model"));
    if (deps.models.embeds(model)) throw badRequest(`Model "${model.id}" is an embedding model and cannot transcribe`, "model");
    const audio = uploadedAudio(deps, model, new Uint8Array(await file.arrayBuffer()), "file");
    const messages: ChatMessage[] = [{ role: "user", content: transcriptionInstruction(field(form, "language"), field(form, "prompt")), audio: [audio] }];

    const options = mergeOptionValues(deps.profile.openAiDefaults, modelOptions(model), { temperature });
    // The transcript is the whole reply: no reasoning is split off, and its length follows the clip's.
    const { choices: [choice] } = await runChat(servedModel(deps, model), {
      prompt: { kind: "conversation", messages },
      output: { reasoning: false },
      options,
      limit: { maxTokens: transcriptionTokens(audio), overflow: "allow" },
    }, serverRun(deps, model, c.req.raw.signal, arrived));
    const result = await choice!.collect();
    const text = result.content.trim();
    c.set("usage", { promptTokens: result.usage.promptTokens, completionTokens: result.usage.completionTokens });
    if (responseFormat === "text") return c.text(text);
    return c.json({
      text,
      usage: { type: "tokens", input_tokens: result.usage.promptTokens, output_tokens: result.usage.completionTokens, total_tokens: result.usage.promptTokens + result.usage.completionTokens },
    });
  };
}
