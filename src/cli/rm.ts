// `llamux rm MODEL...`: removes models and the blobs no other model uses.
import { parseArgs } from "node:util";
import { openStore } from "./model-store-access.ts";
import { ServerClient } from "./server-client.ts";
import { UsageError } from "../usage-error.ts";
import { helpFlag, renderHelp, type HelpPage } from "./help-layout.ts";

export const rmPage: HelpPage = {
  usage: ["llamux rm MODEL [MODEL...]"],
  description: `Removes each MODEL from the store, then every blob (weights, template, ...) that no remaining model
references. When a server answers at LLAMUX_HOST (or OLLAMA_HOST), it removes them from its store.`,
  flags: helpFlag,
};

export const rmHelp = renderHelp(rmPage);

export async function rmCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: helpFlag });
  if (values.help) {
    console.log(rmHelp);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError("rm needs at least one model name");
  const client = await ServerClient.connect();
  if (client) {
    for (const name of positionals) {
      await client.request("DELETE", "/api/delete", { model: name });
      console.log(`deleted '${name}'`);
    }
    return 0;
  }
  const store = openStore();
  for (const name of positionals) {
    const stored = store.find(name);
    await store.remove(name);
    console.log(`deleted '${stored?.name ?? name}'`);
  }
  return 0;
}
