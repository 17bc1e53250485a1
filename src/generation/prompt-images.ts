// Puts a conversation's images into its prompt: each image becomes the engine's media marker in the
// text of its message (before the message's text, as Ollama places them), and the images are
// prepared for the engine in the same order.
import type { ChatMessage } from "../chat/types.ts";
import type { EngineImage, ModelInfo } from "../engine/types.ts";
import { toEngineImage } from "../vision/image-format.ts";
import { ImageInputError } from "../vision/image-input-error.ts";
import { AudioInputError } from "../audio/audio-input-error.ts";

export interface MessagesWithMarkers {
  messages: ChatMessage[];
  images: EngineImage[];
}

export function hasImages(messages: ChatMessage[]): boolean {
  return messages.some((message) => (message.images?.length ?? 0) > 0);
}

export function hasAudio(messages: ChatMessage[]): boolean {
  return messages.some((message) => (message.audio?.length ?? 0) > 0);
}

/**
 * Throws ImageInputError when the conversation has images and the model no vision, AudioInputError
 * when it has audio and the model's projector no audio encoder. A message's media go before its text:
 * images first, then audio clips, one media marker each, in the order the engine receives them.
 */
export async function placeImages(messages: ChatMessage[], info: ModelInfo): Promise<MessagesWithMarkers> {
  const withImages = hasImages(messages);
  const withAudio = hasAudio(messages);
  if (!withImages && !withAudio) return { messages, images: [] };
  if (withImages && !info.vision) throw new ImageInputError(`Model "${info.path}" has no vision support (no projector is attached): it cannot take images`);
  if (withImages && !info.vision!.images) throw new ImageInputError(`Model "${info.path}" has no vision support (its projector has no vision encoder): it cannot take images`);
  if (withAudio && !info.vision?.audio) throw new AudioInputError(`Model "${info.path}" has no audio support (no projector with an audio encoder is attached): it cannot take audio`);
  const marker = info.vision!.mediaMarker;
  const images: EngineImage[] = [];
  const placed: ChatMessage[] = [];
  for (const message of messages) {
    const count = (message.images?.length ?? 0) + (message.audio?.length ?? 0);
    if (count === 0) {
      placed.push(message);
      continue;
    }
    for (const image of message.images ?? []) images.push(await toEngineImage(image));
    for (const clip of message.audio ?? []) images.push({ kind: "audio", bytes: clip });
    const { images: _, audio: __, ...rest } = message;
    const text = message.content ?? "";
    placed.push({ ...rest, content: marker.repeat(count) + (text ? `\n${text}` : "") });
  }
  return { messages: placed, images };
}

/** The prompt text without its media markers: text that may leave the engine (token counts, context). */
export function withoutMediaMarkers(text: string, info: ModelInfo): string {
  return info.vision ? text.replaceAll(info.vision.mediaMarker, "") : text;
}
