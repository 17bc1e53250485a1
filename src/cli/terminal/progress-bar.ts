// The terminal view of pull and create progress: one line per status, and for a transfer a bar with
// percent, bytes done of total, speed and time left, redrawn in place. Without a terminal each status
// is printed once, as a plain line.
import type { PullProgress } from "../../store/pull-progress.ts";
import { humanBytes, shortDuration } from "./format.ts";

const BAR_WIDTH = 25;
const REDRAW_MS = 100;

export interface ProgressOutput {
  write(text: string): void;
  isTTY?: boolean;
  columns?: number;
}

export class ProgressView {
  private status: string | undefined;
  private lastDraw = 0;
  private lastLine = "";
  private readonly samples: Array<{ at: number; completed: number }> = [];

  constructor(private readonly out: ProgressOutput = process.stderr) {}

  /** Shows one progress event. */
  update(event: PullProgress): void {
    if (event.status !== this.status) {
      this.endLine();
      this.status = event.status;
      this.samples.length = 0;
      if (!this.out.isTTY) this.out.write(`${event.status}\n`);
    }
    if (!this.out.isTTY) return;
    const now = Date.now();
    const final = event.total !== undefined && event.completed === event.total;
    if (!final && now - this.lastDraw < REDRAW_MS && this.lastLine) return;
    this.lastDraw = now;
    this.draw(this.lineFor(event, now));
  }

  /** Ends the current line; call once the work is done or failed. */
  finish(): void {
    this.endLine();
    this.status = undefined;
  }

  private lineFor(event: PullProgress, now: number): string {
    if (event.total === undefined || event.total <= 0) return event.status;
    const completed = Math.min(event.completed ?? 0, event.total);
    this.samples.push({ at: now, completed });
    while (this.samples.length > 2 && now - this.samples[0]!.at > 5000) this.samples.shift();
    const ratio = completed / event.total;
    const filled = Math.round(ratio * BAR_WIDTH);
    const bar = `▕${"█".repeat(filled)}${" ".repeat(BAR_WIDTH - filled)}▏`;
    const percent = `${String(Math.floor(ratio * 100)).padStart(3)}%`;
    const sizes = `${humanBytes(completed)}/${humanBytes(event.total)}`;
    const first = this.samples[0]!;
    const seconds = (now - first.at) / 1000;
    const rate = seconds > 0.2 ? (completed - first.completed) / seconds : 0;
    const speed = rate > 0 ? `${humanBytes(rate)}/s` : "";
    const eta = rate > 0 && completed < event.total ? shortDuration((event.total - completed) / rate) : "";
    return `${event.status}: ${percent} ${bar} ${sizes}  ${speed.padStart(9)}  ${eta}`.trimEnd();
  }

  private draw(line: string): void {
    const width = this.out.columns && this.out.columns >= 40 ? this.out.columns : 120;
    const shown = line.length > width - 1 ? line.slice(0, width - 1) : line;
    this.out.write(`\r\x1b[K${shown}`);
    this.lastLine = shown;
  }

  private endLine(): void {
    if (this.out.isTTY && this.lastLine) this.out.write("\n");
    this.lastLine = "";
  }
}

/** A progress handler that draws on standard error. */
export function terminalProgress(): { onProgress: (event: PullProgress) => void; finish: () => void } {
  const view = new ProgressView(process.stderr);
  return { onProgress: (event) => view.update(event), finish: () => view.finish() };
}
