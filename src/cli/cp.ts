// `llamux cp SOURCE DESTINATION`: a second name for a stored model (same manifest, same id).
import { parseArgs } from "node:util";
import { parseModelName, formatModelName } from "../store/model-name.ts";
import { openStore } from "./model-store-access.ts";
import { ServerClient } from "./server-client.ts";
import { UsageError } from "../usage-error.ts";
import { helpFlag, renderHelp, type HelpPage } from "./help-layout.ts";

export const cpPage: HelpPage = {
  usage: ["llamux cp SOURCE DESTINATION"],
  description: `Copies the stored model SOURCE to the name DESTINATION. Both names share their blobs, so the copy
takes no space; it gets the same ID. When a server answers at LLAMUX_HOST (or OLLAMA_HOST), the copy
is made in its store.`,
  flags: helpFlag,
};

export const cpHelp = renderHelp(cpPage);

export async function cpCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: helpFlag });
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
