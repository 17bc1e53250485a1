// Streams text to the terminal, breaking lines between words at the terminal's width as `ollama run`
// does (unless --nowordwrap). A word is held back until a space or newline shows where it ends.

export class WordWrapWriter {
  private column = 0;
  private word = "";
  private space = false;

  constructor(private readonly write: (text: string) => void, private readonly width: number | undefined) {}

  push(text: string): void {
    if (!this.width) {
      this.write(text);
      return;
    }
    for (const ch of text) {
      if (ch === "\n") {
        this.flushWord();
        this.write("\n");
        this.column = 0;
        this.space = false;
      } else if (ch === " ") {
        this.flushWord();
        this.space = true;
      } else this.word += ch;
    }
    if (this.word.length >= this.width) this.flushWord();
  }

  /** Writes what is held back (at the end of an answer). */
  finish(): void {
    this.flushWord();
  }

  get atLineStart(): boolean {
    return this.column === 0 && this.word === "";
  }

  private flushWord(): void {
    if (!this.word) return;
    // a space is written only once the next word shows it fits on the line
    if (this.column > 0 && this.column + 1 + this.word.length > this.width!) {
      this.write("\n");
      this.column = 0;
    } else if (this.space && this.column > 0) {
      this.write(" ");
      this.column++;
    }
    this.space = false;
    this.write(this.word);
    this.column += this.word.length;
    this.word = "";
  }
}
