// `llamux list` (`ls`): the stored models with NAME, ID, SIZE and MODIFIED, as `ollama list` prints them.
import { parseArgs } from "node:util";
import { openStore } from "./model-store-access.ts";
import { ServerClient } from "./server-client.ts";
import { humanBytes, humanTime } from "./terminal/format.ts";
import { formatTable } from "./terminal/table.ts";
import { UsageError } from "../usage-error.ts";
import { helpFlag, renderHelp, type HelpPage } from "./help-layout.ts";

export const listPage: HelpPage = {
  usage: ["llamux list [PREFIX]"],
  description: `Lists the models newest first, with NAME, ID (first 12 hex digits of the manifest's sha256), SIZE and
MODIFIED: those of the server at LLAMUX_HOST (or OLLAMA_HOST) when one answers, else those in the
store (LLAMUX_MODELS, else OLLAMA_MODELS, else ~/.llamux/models). With PREFIX, only names that start
with it. "ls" is the same command.`,
  flags: helpFlag,
};

export const listHelp = renderHelp(listPage);

export interface ListedModel {
  name: string;
  id: string;
  size: number;
  modifiedAt: Date;
}

export function formatModelList(models: ListedModel[], now = Date.now()): string {
  const rows = models.map((model) => [model.name, model.id, humanBytes(model.size), humanTime(model.modifiedAt, now)]);
  return formatTable(["NAME", "ID", "SIZE", "MODIFIED"], rows);
}

export async function listCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: helpFlag });
  if (values.help) {
    console.log(listHelp);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError("list takes at most one name prefix");
  const prefix = positionals[0]?.toLowerCase();
  const models = (await serverModels()) ?? openStore().list();
  console.log(formatModelList(models.filter((model) => !prefix || model.name.toLowerCase().startsWith(prefix))));
  return 0;
}

/** The server's models (GET /api/tags), or undefined when no server answers. */
async function serverModels(): Promise<ListedModel[] | undefined> {
  const client = await ServerClient.connect();
  if (!client) return undefined;
  const { models } = await client.get<{ models: Array<{ name: string; digest: string; size: number; modified_at: string }> | null }>("/api/tags");
  return (models ?? []).map((model) => ({ name: model.name, id: model.digest.slice(0, 12), size: model.size, modifiedAt: new Date(model.modified_at) }));
}
