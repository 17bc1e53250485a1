// Finds where a block of calls ends while its text streams in: at the closing marker, or for a bare
// list at its matching bracket, ignoring both inside quoted strings (so a call may carry "]" or even
// "</tool_call>" in an argument). State survives between scans, so each character is read once.

export interface BlockEnd {
  /** Length of the block's own text. */
  bodyLength: number;
  /** Length of the closing marker after it (0 for a bare list). */
  closeLength: number;
}

const OPENERS = new Set(["[", "(", "{"]);
const CLOSERS = new Set(["]", ")", "}"]);

export class BlockScanner {
  private index = 0;
  private quote: string | undefined;
  private escaped = false;
  private depth = 0;

  /** `end`: the closing marker; without one the block is a bracketed list that closes itself. */
  constructor(private readonly end: string | undefined) {}

  /** Scans the block's text so far (each call passes the whole, longer text); undefined while it is open. */
  scan(text: string): BlockEnd | undefined {
    for (; this.index < text.length; this.index++) {
      const char = text[this.index]!;
      if (this.quote !== undefined) {
        if (this.escaped) this.escaped = false;
        else if (char === "\\") this.escaped = true;
        else if (char === this.quote) this.quote = undefined;
        continue;
      }
      if (this.end !== undefined) {
        const rest = text.length - this.index;
        if (rest < this.end.length && this.end.startsWith(text.slice(this.index))) return undefined; // a marker may be arriving
        if (text.startsWith(this.end, this.index)) return { bodyLength: this.index, closeLength: this.end.length };
      }
      if (char === '"' || char === "'") {
        this.quote = char;
      } else if (OPENERS.has(char)) {
        this.depth++;
      } else if (CLOSERS.has(char) && this.end === undefined && --this.depth === 0) {
        return { bodyLength: this.index + 1, closeLength: 0 };
      }
    }
    return undefined;
  }
}
