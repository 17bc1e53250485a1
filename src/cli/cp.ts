// `llamux cp SOURCE DESTINATION`: a second name for a stored model (same manifest, same id).
import { parseArgs } from "node:util";
import { parseModelName, formatModelName } from "../store/model-name.ts";
import { openStore } from "./model-store-access.ts";
import { ServerClient } from "./server-client.ts";
import { UsageError } from "../usage-error.ts";

export const cpHelp = `Usage: llamux cp SOURCE DESTINATION

Copies the stored model SOURCE to the name DESTINATION. Both names share their blobs, so the copy
takes no space; it gets the same ID. When a server answers at LLAMUX_HOST (or OLLAMA_HOST), the copy
is made in its store.

Options:
  -h, --help   show this help`;

export async function cpCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { help: { type: "boolean", short: "h" } } });
  if (values.help) {
    console.log(cpHelp);
    return 0;
  }
  if (positionals.length !== 2) throw new UsageError("cp needs a SOURCE and a DESTINATION name");
  const [source, destination] = positionals as [string, string];
  const client = await ServerClient.connect();
  if (client) {
    await client.post("/api/copy", { source, destination });
    console.log(`copied '${source}' to '${destination}'`);
    return 0;
  }
  const store = openStore();
  await store.copy(source, destination);
  console.log(`copied '${store.find(source)?.name ?? source}' to '${formatModelName(parseModelName(destination))}'`);
  return 0;
}
