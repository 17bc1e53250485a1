// `llamux list` (`ls`): the stored models with NAME, ID, SIZE and MODIFIED, as `ollama list` prints them.
import { parseArgs } from "node:util";
import { openStore } from "./model-store-access.ts";
import { humanBytes, humanTime } from "./terminal/format.ts";
import { formatTable } from "./terminal/table.ts";
import { UsageError } from "./usage-error.ts";

export const listHelp = `Usage: llamux list [PREFIX]   (alias: ls)

Lists the models in the store (LLAMUX_MODELS, else OLLAMA_MODELS, else ~/.llamux/models), newest first,
with NAME, ID (first 12 hex digits of the manifest's sha256), SIZE and MODIFIED. With PREFIX, only
names that start with it.

Options:
  -h, --help   show this help`;

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
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { help: { type: "boolean", short: "h" } } });
  if (values.help) {
    console.log(listHelp);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError("list takes at most one name prefix");
  const prefix = positionals[0]?.toLowerCase();
  const models = openStore().list().filter((model) => !prefix || model.name.toLowerCase().startsWith(prefix));
  console.log(formatModelList(models));
  return 0;
}
