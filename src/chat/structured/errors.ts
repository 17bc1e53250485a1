// The error of a structured-output request that cannot be enforced: the client's problem, a 400.

export class StructuredOutputError extends Error {
  /** The JSON Schema keyword it is about, when there is one. */
  readonly keyword: string | undefined;
  constructor(message: string, keyword?: string) {
    super(message);
    this.name = "StructuredOutputError";
    this.keyword = keyword;
  }
}
