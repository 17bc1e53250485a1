// The one error of the tool-call parsers: where in the call text parsing failed, and the text around it.

/** Characters of context shown on each side of the failure. */
const EXCERPT_RADIUS = 15;

export class ToolCallSyntaxError extends SyntaxError {
  /** Offset (UTF-16 code units) into the parsed text where parsing failed. */
  readonly offset: number;
  /** The text around `offset`, for messages and logs. */
  readonly excerpt: string;

  constructor(problem: string, text: string, offset: number) {
    const excerpt = excerptAt(text, offset);
    super(`Cannot parse tool call "${excerpt}": ${problem} at offset ${offset}`);
    this.name = "ToolCallSyntaxError";
    this.offset = offset;
    this.excerpt = excerpt;
  }
}

function excerptAt(text: string, offset: number): string {
  const start = Math.max(0, offset - EXCERPT_RADIUS);
  const end = Math.min(text.length, offset + EXCERPT_RADIUS);
  return `${start > 0 ? "…" : ""}${text.slice(start, end)}${end < text.length ? "…" : ""}`;
}
