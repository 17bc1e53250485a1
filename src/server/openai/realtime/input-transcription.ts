// The transcript of a user's clip, through the same chat turn as /v1/audio/transcriptions (the clip and an
// instruction, on a model that hears), streamed as it is written.
import type { ChatMessage } from "../../../chat/types.ts";
import { runChat } from "../../../generation/run-chat.ts";
import { mergeOptionValues } from "../../../options/values.ts";
import { EngineLeases } from "../../../engine/engine-leases.ts";
import { modelOptions, serverRun, servedModel } from "../../chat-request.ts";
import type { ServerDeps } from "../../deps.ts";
import { noAudio } from "../../request-audio.ts";
import { transcriptionInstruction, transcriptionTokens } from "../transcriptions.ts";
import type { TranscriptionConfig } from "./session-config.ts";

export interface Transcript {
  text: string;
  inputTokens: number;
  outputTokens: number;
}

export async function transcribe(
  deps: ServerDeps, config: TranscriptionConfig, wav: Uint8Array, signal: AbortSignal, onDelta: (text: string) => void,
): Promise<Transcript> {
  const model = deps.models.resolve(config.model);
  if (!deps.models.hasAudio(model)) throw noAudio(model, "session.audio.input.transcription.model");
  const messages: ChatMessage[] = [{ role: "user", content: transcriptionInstruction(config.language, config.prompt), audio: [wav] }];
  const leases = new EngineLeases();
  try {
    return await leases.run(async () => {
      const { choices: [choice] } = await runChat(servedModel(deps, model), {
        prompt: { kind: "conversation", messages },
        output: { reasoning: false },
        options: mergeOptionValues(deps.profile.openAiDefaults, modelOptions(model), { temperature: 0 }),
        limit: { maxTokens: transcriptionTokens(wav), overflow: "allow" },
      }, serverRun(deps, model, signal, performance.now()));
      let text = "";
      for await (const event of choice!.events()) {
        if (event.type === "content") {
          // leading blanks are not part of the transcript
          const delta = text ? event.text : event.text.trimStart();
          text += delta;
          if (delta) onDelta(delta);
        } else if (event.type === "error") {
          throw new Error(event.message);
        } else if (event.type === "done") {
          return { text: text.trim(), inputTokens: event.usage.promptTokens, outputTokens: event.usage.completionTokens };
        }
      }
      throw new Error("The transcription ended without a result");
    });
  } finally {
    leases.end();
  }
}
