// `llamux stop MODEL`: asks the running server to unload a model now (keep_alive 0), as `ollama stop` does.
import { parseArgs } from "node:util";
import { ServerClient } from "./server-client.ts";
import { UsageError } from "../usage-error.ts";
import { helpFlag, renderHelp, type HelpPage } from "./help-layout.ts";

export const stopPage: HelpPage = {
  usage: ["llamux stop MODEL"],
  description: `Unloads MODEL from the server at LLAMUX_HOST (or OLLAMA_HOST, default 127.0.0.1:11434) once its
running requests end.`,
  flags: helpFlag,
};

export const stopHelp = renderHelp(stopPage);

export async function stopCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: helpFlag });
  if (values.help) {
    console.log(stopHelp);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError("stop needs one model name");
  const client = await ServerClient.connect();
  if (!client) throw new Error(`Cannot stop "${positionals[0]}": no server answers at ${new ServerClient().baseUrl}`);
  await client.post("/api/generate", { model: positionals[0], keep_alive: 0 });
  return 0;
}
