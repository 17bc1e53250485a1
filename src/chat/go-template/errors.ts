// Errors of the Go template engine, each with the line and column in the template source.

export interface SourcePosition {
  line: number;
  column: number;
}

/** Line and column (both 1-based) of an offset in `source`. */
export function positionOf(source: string, offset: number): SourcePosition {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < source.length; i++) {
    if (source.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** The template text is not valid Go template syntax. */
export class TemplateSyntaxError extends SyntaxError {
  override name = "TemplateSyntaxError";
  readonly line: number;
  readonly column: number;
  constructor(reason: string, position: SourcePosition) {
    super(`Cannot parse template at line ${position.line}, column ${position.column}: ${reason}`);
    this.line = position.line;
    this.column = position.column;
  }
}

/** Running the template failed (a missing function, a wrong type, an index out of range). */
export class TemplateExecutionError extends Error {
  override name = "TemplateExecutionError";
  readonly line: number;
  readonly column: number;
  constructor(reason: string, position: SourcePosition, readonly near: string) {
    super(`Cannot execute template at line ${position.line}, column ${position.column} (${near}): ${reason}`);
    this.line = position.line;
    this.column = position.column;
  }
}

/** Thrown by functions and value helpers; the executor adds the position and rethrows it as TemplateExecutionError. */
export class TemplateValueError extends Error {
  override name = "TemplateValueError";
}

/** Running the template went past one of its bounds (steps, output size, time): the template's fault, not a crash. */
export class TemplateLimitError extends RangeError {
  override name = "TemplateLimitError";
}
