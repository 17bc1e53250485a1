// Runs one benchmark subprocess to completion and collects its output, and how busy the rest of the
// machine was meanwhile.
import { foreignCpuShare, readCpuTimes } from "./cpu-load.ts";

export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  wallMs: number;
  foreignCpuShare: number; // 0–1 of the machine used by other processes while this one ran
}

export interface CommandOptions {
  env?: Record<string, string | undefined>;
  timeoutMs: number;
  cwd?: string;
}

export async function runCommand(argv: string[], options: CommandOptions): Promise<CommandResult> {
  const cpuBefore = readCpuTimes();
  const child = Bun.spawn(argv, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, options.timeoutMs);
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  clearTimeout(timer);
  const cpuAfter = readCpuTimes();
  // resourceUsage covers the child and the descendants it waited for (bench-engine.ts's engine process).
  const ownCpuSeconds = Number(child.resourceUsage()?.cpuTime.total ?? 0n) / 1e6;
  return {
    exitCode, stdout, stderr, timedOut, wallMs: cpuAfter.at - cpuBefore.at,
    foreignCpuShare: foreignCpuShare(cpuBefore, cpuAfter, ownCpuSeconds),
  };
}

/** One line saying why a command failed, for the report: exit status and the error line of its stderr. */
export function describeFailure(label: string, result: CommandResult): string {
  const status = result.timedOut ? "timed out" : `exit code ${result.exitCode}`;
  const lines = result.stderr.split("\n").map((l) => l.trim()).filter(Boolean);
  // A thrown error's message beats the end of its stack trace.
  const errorLine = lines.findLast((l) => /^\w*Error\b|\berror\b/i.test(l) && !l.startsWith("at "));
  const detail = errorLine ?? lines.slice(-3).join(" | ");
  return `${label}: ${status}${detail ? `: ${detail}` : ""}`;
}
