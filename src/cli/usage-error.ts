// A mistake in how llamux was called (unknown command, bad flag): the CLI prints the message and the
// command's help and exits 2, where any other error exits 1.
export class UsageError extends Error {
  override name = "UsageError";
}

/** node:util parseArgs reports bad flags as TypeErrors with ERR_PARSE_ARGS_* codes. */
export function isUsageError(error: unknown): boolean {
  if (error instanceof UsageError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_");
}
