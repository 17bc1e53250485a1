// Audio in requests, for every profile's routes: a model whose projector has no audio encoder refuses it
// (400 naming the model), and each clip is checked (base64, format, size) with its failure a 400 saying why.
import type { ServerDeps } from "./deps.ts";
import type { ServedModel } from "./model-service.ts";
import { badRequest, type ApiError } from "./api-error.ts";
import { AudioInputError, audioFromBase64, checkedAudio } from "../audio/audio-source.ts";

export function noAudio(model: ServedModel, param?: string): ApiError {
  return badRequest(`Model "${model.id}" has no audio support (no projector with an audio encoder is attached), so it cannot take audio`, param);
}

/** Reads one OpenAI input_audio `{data, format}`; `param` names the content part in errors. */
export type AudioReader = (audio: { data: string; format?: string }, param: string) => Uint8Array;

export function audioReader(deps: ServerDeps, model: ServedModel): AudioReader {
  return (audio, param) => {
    if (!deps.models.hasAudio(model)) throw noAudio(model, param);
    try {
      return audioFromBase64(audio.data, audio.format);
    } catch (error) {
      if (error instanceof AudioInputError) throw badRequest(error.message, param);
      throw error;
    }
  };
}

/** An uploaded audio file (transcriptions); `param` names the form field. */
export function uploadedAudio(deps: ServerDeps, model: ServedModel, bytes: Uint8Array, param: string): Uint8Array {
  if (!deps.models.hasAudio(model)) throw noAudio(model, "model");
  try {
    return checkedAudio(bytes, "the uploaded file");
  } catch (error) {
    if (error instanceof AudioInputError) throw badRequest(error.message, param);
    throw error;
  }
}
