// Where a reply's text is cut for speaking while it is still being written: after a sentence's end (., !,
// ? or a line break, then a space) once the piece has MIN_SEGMENT_CHARS, or at a space before
// MAX_SEGMENT_CHARS. A cut depends only on the text before it and the character after it, so cutting
// the text as it grows gives the same pieces as cutting the whole text (speechSegments).

const MIN_SEGMENT_CHARS = 24;
const MAX_SEGMENT_CHARS = 400;
const SENTENCE_END = /[.!?。！？\n]/;

/** The length of the first whole piece of `text`, or 0 while more text could still move its end. */
export function segmentEnd(text: string): number {
  for (let i = MIN_SEGMENT_CHARS - 1; i < Math.min(text.length - 1, MAX_SEGMENT_CHARS); i++) {
    if (SENTENCE_END.test(text[i]!) && /\s/.test(text[i + 1]!)) return i + 1;
  }
  if (text.length <= MAX_SEGMENT_CHARS) return 0;
  const space = text.lastIndexOf(" ", MAX_SEGMENT_CHARS);
  return space > 0 ? space + 1 : MAX_SEGMENT_CHARS;
}

/** The pieces a whole reply is spoken in, blank ones left out. */
export function speechSegments(text: string): string[] {
  const pieces: string[] = [];
  let rest = text;
  for (let end = segmentEnd(rest); end > 0; end = segmentEnd(rest)) {
    pieces.push(rest.slice(0, end));
    rest = rest.slice(end);
  }
  pieces.push(rest);
  return pieces.map((piece) => piece.trim()).filter((piece) => piece.length > 0);
}

/** Cuts text as it arrives: `push` returns the pieces it completes, `end` the rest. */
export class SegmentCutter {
  private pending = "";

  push(text: string): string[] {
    this.pending += text;
    const pieces: string[] = [];
    for (let end = segmentEnd(this.pending); end > 0; end = segmentEnd(this.pending)) {
      pieces.push(this.pending.slice(0, end));
      this.pending = this.pending.slice(end);
    }
    return pieces.map((piece) => piece.trim()).filter((piece) => piece.length > 0);
  }

  end(): string[] {
    const rest = this.pending.trim();
    this.pending = "";
    return rest ? [rest] : [];
  }
}
