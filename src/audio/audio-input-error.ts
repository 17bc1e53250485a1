// Audio a request cannot use (undecodable, unsupported, too long): always the request's fault, a 400.
export class AudioInputError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "AudioInputError";
  }
}
