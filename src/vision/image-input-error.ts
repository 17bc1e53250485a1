// An image a request carries that cannot be used: bad base64, a refused or failed URL, bytes that are
// not an image, or a model without vision. Always the request's fault: every profile answers 400.
export class ImageInputError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ImageInputError";
  }
}
