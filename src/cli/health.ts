// `llamux health`: asks a running server whether it is ready, for container HEALTHCHECKs and scripts
// on machines without curl.
import { parseArgs } from "node:util";
import { helpFlag, renderHelp, type Flags, type HelpPage } from "./help-layout.ts";

export const healthFlags = {
  url: { type: "string", value: "URL", help: "what to ask (default http://127.0.0.1:8000/health, profile b's readiness probe)" },
  timeout: { type: "string", value: "SECONDS", help: "give up after this long (default 5)" },
  ...helpFlag,
} as const satisfies Flags;

export const healthPage: HelpPage = {
  usage: ["llamux health [--url URL] [--timeout SECONDS]"],
  description: "Exits 0 when the server at URL answers 200 (ready), 1 otherwise (not up, loading, or failing).",
  flags: healthFlags,
};

export const healthHelp = renderHelp(healthPage);

export async function healthCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: healthFlags, strict: true });
  if (values.help) {
    console.log(healthHelp);
    return 0;
  }
  const url = values.url ?? "http://127.0.0.1:8000/health";
  const seconds = Number(values.timeout ?? 5);
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(seconds * 1000) });
    if (response.ok) return 0;
    console.error(`${url}: ${response.status} ${response.statusText}`);
  } catch (error) {
    console.error(`${url}: ${(error as Error).message}`);
  }
  return 1;
}
