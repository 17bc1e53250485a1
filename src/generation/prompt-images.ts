// Puts a conversation's images into its prompt: each image becomes the engine's media marker in the
// text of its message (before the message's text, as Ollama places them), and the images are
// prepared for the engine in the same order.
import type { ChatMessage } from "../chat/types.ts";
import type { EngineImage, ModelInfo } from "../engine/types.ts";
import { toEngineImage } from "../vision/image-format.ts";
import { ImageInputError } from "../vision/image-input-error.ts";

export interface MessagesWithMarkers {
  messages: ChatMessage[];
  images: EngineImage[];
}

export function hasImages(messages: ChatMessage[]): boolean {
  return messages.some((message) => (message.images?.length ?? 0) > 0);
}

/** Throws ImageInputError when the conversation has images and the model no vision. */
export async function placeImages(messages: ChatMessage[], info: ModelInfo): Promise<MessagesWithMarkers> {
  if (!hasImages(messages)) return { messages, images: [] };
  if (!info.vision) throw new ImageInputError(`Model "${info.path}" has no vision support (no projector is attached): it cannot take images`);
  const marker = info.vision.mediaMarker;
  const images: EngineImage[] = [];
  const placed: ChatMessage[] = [];
  for (const message of messages) {
    if (!message.images?.length) {
      placed.push(message);
      continue;
    }
    for (const image of message.images) images.push(await toEngineImage(image));
    const { images: _, ...rest } = message;
    const text = message.content ?? "";
    placed.push({ ...rest, content: marker.repeat(message.images.length) + (text ? `\n${text}` : "") });
  }
  return { messages: placed, images };
}

/** The prompt text without its media markers: text that may leave the engine (token counts, context). */
export function withoutMediaMarkers(text: string, info: ModelInfo): string {
  return info.vision ? text.replaceAll(info.vision.mediaMarker, "") : text;
}
