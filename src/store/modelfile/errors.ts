// The error a Modelfile that cannot be read raises: which line, what is wrong, and the text there.

const EXCERPT_LENGTH = 40;

export class ModelfileSyntaxError extends SyntaxError {
  override name = "ModelfileSyntaxError";
  /** 1-based line of the problem. */
  readonly line: number;
  /** The start of that line, so a message can show where. */
  readonly excerpt: string;
  /** What is wrong, without the position. */
  readonly reason: string;

  /** `line` 0 means the file as a whole (a missing FROM). */
  constructor(reason: string, line: number, lineText = "") {
    const excerpt = shorten(lineText.trim());
    const where = line > 0 ? ` at line ${line}` : "";
    super(`Cannot parse Modelfile${where}: ${reason}${excerpt ? ` (near "${excerpt}")` : ""}`);
    this.line = line;
    this.excerpt = excerpt;
    this.reason = reason;
  }
}

function shorten(text: string): string {
  return text.length > EXCERPT_LENGTH ? `${text.slice(0, EXCERPT_LENGTH - 1)}…` : text;
}
