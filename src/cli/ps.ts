// `llamux ps`: the models a running server has loaded, as `ollama ps` prints them.
import { parseArgs } from "node:util";
import { ServerClient } from "./server-client.ts";
import { humanBytes, humanTime } from "./terminal/format.ts";
import { formatTable } from "./terminal/table.ts";
import { helpFlag, renderHelp, type HelpPage } from "./help-layout.ts";

export const psPage: HelpPage = {
  usage: ["llamux ps"],
  description: `Lists the models loaded by the server at LLAMUX_HOST (or OLLAMA_HOST, default 127.0.0.1:11434) with
NAME, ID, SIZE, PROCESSOR, CONTEXT and UNTIL (when an idle model is unloaded).`,
  flags: helpFlag,
};

export const psHelp = renderHelp(psPage);

export interface RunningModel {
  name: string;
  digest?: string;
  size: number;
  size_vram?: number;
  context_length?: number;
  expires_at?: string;
}

/** `100% CPU`, `100% GPU`, or the split `48%/52% CPU/GPU`. */
export function processorText(size: number, sizeVram: number): string {
  if (sizeVram <= 0 || size <= 0) return "100% CPU";
  if (sizeVram >= size) return "100% GPU";
  const gpu = Math.round((sizeVram / size) * 100);
  return `${100 - gpu}%/${gpu}% CPU/GPU`;
}

export function formatRunningModels(models: RunningModel[], now = Date.now()): string {
  const rows = models.map((model) => {
    const expires = model.expires_at ? new Date(model.expires_at) : undefined;
    const until = !expires ? "" : expires.getTime() < now ? "Stopping..." : humanTime(expires, now);
    return [model.name, (model.digest ?? "").slice(0, 12), humanBytes(model.size), processorText(model.size, model.size_vram ?? 0),
      model.context_length ? String(model.context_length) : "", until];
  });
  return formatTable(["NAME", "ID", "SIZE", "PROCESSOR", "CONTEXT", "UNTIL"], rows);
}

export async function psCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: helpFlag });
  if (values.help) {
    console.log(psHelp);
    return 0;
  }
  const client = await ServerClient.connect();
  if (!client) {
    console.log(formatRunningModels([]));
    console.error(`(no server answers at ${new ServerClient().baseUrl}, so no model is loaded)`);
    return 0;
  }
  const { models } = await client.get<{ models: RunningModel[] }>("/api/ps");
  console.log(formatRunningModels(models ?? []));
  return 0;
}
