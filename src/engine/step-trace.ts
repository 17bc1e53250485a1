// A line per decode step, for finding which steps make a stream pause (LLAMUX_STEP_TRACE=FILE): when the
// step ended (ms since the epoch), its generating rows, prompt tokens, whole time and llama_decode's
// share in ms, and the requests still waiting. Appended as it goes; off unless the variable names a file.
import { appendFileSync } from "node:fs";

export interface StepRecord {
  decodeRows: number;
  promptTokens: number;
  stepMs: number;
  decodeMs: number;
  waiting: number;
}

export class StepTrace {
  private failed = false;

  private constructor(private readonly path: string) {}

  /** The trace LLAMUX_STEP_TRACE asks for, if any. */
  static fromEnvironment(env: Record<string, string | undefined> = process.env): StepTrace | undefined {
    const path = env.LLAMUX_STEP_TRACE;
    return path ? new StepTrace(path) : undefined;
  }

  record(step: StepRecord): void {
    if (this.failed) return;
    const line = `${Date.now()} ${step.decodeRows} ${step.promptTokens} ${step.stepMs.toFixed(1)} ${step.decodeMs.toFixed(1)} ${step.waiting}\n`;
    try {
      appendFileSync(this.path, line);
    } catch (error) {
      // a trace that cannot be written stops; serving goes on
      this.failed = true;
      process.stderr.write(`llamux: cannot write the step trace to "${this.path}": ${(error as Error).message}\n`);
    }
  }
}
