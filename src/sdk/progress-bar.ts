// The "Processed prompts" bar vLLM's LLM shows on stderr while a batch runs: done/total, elapsed time,
// rate and token speeds. On a terminal it redraws one line; elsewhere only the final line is written.

const WIDTH = 24;

function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return `${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
}

export class ProgressBar {
  private done = 0;
  private inputTokens = 0;
  private outputTokens = 0;
  private readonly started = performance.now();
  private lastDraw = 0;

  constructor(private readonly total: number, private readonly stream: NodeJS.WriteStream = process.stderr, private readonly label = "Processed prompts") {
    if (this.interactive) this.draw();
  }

  private get interactive(): boolean {
    return this.stream.isTTY === true;
  }

  /** One prompt finished, with its prompt and generated token counts. */
  tick(inputTokens: number, outputTokens: number): void {
    this.done++;
    this.inputTokens += inputTokens;
    this.outputTokens += outputTokens;
    const now = performance.now();
    if (this.interactive && (now - this.lastDraw > 100 || this.done === this.total)) this.draw();
  }

  /** Writes the final line (also when not on a terminal). */
  finish(): void {
    if (this.interactive) this.stream.write(`\r${this.line()}\n`);
    else this.stream.write(`${this.line()}\n`);
  }

  line(): string {
    const elapsed = (performance.now() - this.started) / 1000;
    const fraction = this.total === 0 ? 1 : this.done / this.total;
    const filled = Math.round(fraction * WIDTH);
    const rate = elapsed > 0 ? this.done / elapsed : 0;
    const remaining = rate > 0 ? (this.total - this.done) / rate : 0;
    const speed = (tokens: number) => (elapsed > 0 ? (tokens / elapsed).toFixed(2) : "0.00");
    return `${this.label}: ${String(Math.round(fraction * 100)).padStart(3)}%|${"█".repeat(filled)}${" ".repeat(WIDTH - filled)}| `
      + `${this.done}/${this.total} [${clock(elapsed)}<${clock(remaining)}, ${rate.toFixed(2)} it/s, `
      + `est. speed input: ${speed(this.inputTokens)} toks/s, output: ${speed(this.outputTokens)} toks/s]`;
  }

  private draw(): void {
    this.lastDraw = performance.now();
    this.stream.write(`\r${this.line()}`);
  }
}
