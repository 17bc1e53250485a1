// Images in requests, for every profile's routes: a model without a projector refuses them (400 naming
// the model), and each image is read under the server's fetch policy, its failure a 400 saying why.
import type { ServerDeps } from "./deps.ts";
import type { ServedModel } from "./model-service.ts";
import { badRequest, type ApiError } from "./api-error.ts";
import { imageFromBase64, imageFromUrl, ImageInputError } from "../vision/image-source.ts";

export function noVision(model: ServedModel, param?: string): ApiError {
  return badRequest(`Model "${model.id}" has no vision support (no projector is attached), so it cannot take images`, param);
}

/** Reads one OpenAI image_url (data URI or http(s) URL); `param` names the content part in errors. */
export type ImageUrlReader = (url: string, param: string) => Promise<Uint8Array>;

export function imageUrlReader(deps: ServerDeps, model: ServedModel): ImageUrlReader {
  return async (url, param) => {
    if (!deps.models.hasVision(model)) throw noVision(model, param);
    try {
      return await imageFromUrl(url, deps.imageFetch);
    } catch (error) {
      if (error instanceof ImageInputError) throw badRequest(error.message, param);
      throw error;
    }
  };
}

/** Ollama's base64 `images`; `refuse` is the profile's own error for a model without vision. */
export function base64Images(deps: ServerDeps, model: ServedModel, images: string[], refuse: () => ApiError): Uint8Array[] {
  if (images.length === 0) return [];
  if (!deps.models.hasVision(model)) throw refuse();
  return images.map((image, i) => {
    try {
      return imageFromBase64(image);
    } catch (error) {
      if (error instanceof ImageInputError) throw badRequest(`Image ${i + 1}: ${error.message}`);
      throw error;
    }
  });
}
