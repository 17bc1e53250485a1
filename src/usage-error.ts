// A mistake in how llamux was called (unknown command, bad flag): the CLI prints the message and the
// command's help and exits 2, where any other error exits 1.
export class UsageError extends Error {
  override name = "UsageError";
}

/** A flag's value as a number (undefined when the flag was not given); anything else is a UsageError naming it. */
export function numberOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || value.trim() === "") throw new UsageError(`Cannot use --${name} "${value}": not a number`);
  return n;
}

/** A flag's value as a whole number within [min, max] (no max: at least min); undefined when not given. */
export function wholeNumberOption(value: string | undefined, flag: string, min: number, max?: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || (max !== undefined && n > max)) {
    throw new UsageError(`--${flag} must be a whole number ${max === undefined ? `of at least ${min}` : `from ${min} to ${max}`}, got "${value}"`);
  }
  return n;
}

/** node:util parseArgs reports bad flags as TypeErrors with ERR_PARSE_ARGS_* codes. */
export function isUsageError(error: unknown): boolean {
  if (error instanceof UsageError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_");
}
