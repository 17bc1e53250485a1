// The few system commands the service installer runs, with errors that name the command.
import { existsSync } from "node:fs";

/** Runs a command; a failure throws with its output unless `allowFailure`, which returns false instead. */
export function run(command: string[], options: { allowFailure?: boolean } = {}): boolean {
  const result = Bun.spawnSync(command, { stdout: "pipe", stderr: "pipe" });
  if (result.exitCode === 0) return true;
  if (options.allowFailure) return false;
  const output = `${result.stderr.toString()}${result.stdout.toString()}`.trim();
  throw new Error(`Cannot run "${command.join(" ")}": exit code ${result.exitCode}${output ? `: ${output}` : ""}`);
}

export function userExists(name: string): boolean {
  return run(["id", "-u", name], { allowFailure: true });
}

/** Whether systemd manages this machine (not so in most containers). */
export function systemdIsRunning(): boolean {
  return existsSync("/run/systemd/system");
}
