// `vllm ...`: vLLM's command line over llamux. `vllm serve MODEL` is `llamux serve --profile b MODEL`
// (the port defaults to 8000 as vLLM's; the address stays loopback unless --host says otherwise).
import { VLLM_COMPATIBLE_VERSION } from "../server/vllm/version.ts";
import type { LlamuxMain } from "./persona.ts";
import { helpAs, wantsHelp } from "./delegate.ts";

export const vllmHelp = `usage: vllm [-h] [-v] {serve} ...

vLLM's command line, served by llamux: an OpenAI-compatible server for GGUF models through llama.cpp.

positional arguments:
  {serve}
    serve        Start the vLLM OpenAI Compatible API server.

options:
  -h, --help     show this help message and exit
  -v, --version  show program's version number and exit

For full list:            vllm [subcommand] --help`;

function usageError(message: string): number {
  console.error(`usage: vllm [-h] [-v] {serve} ...\nvllm: error: ${message}`);
  return 2;
}

export async function vllmMain(argv: string[], llamux: LlamuxMain): Promise<number | undefined> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "-h" || first === "--help") {
    console.log(vllmHelp);
    return 0;
  }
  if (first === "-v" || first === "--version") {
    console.log(VLLM_COMPATIBLE_VERSION);
    return 0;
  }
  if (first !== "serve") {
    return usageError(first.startsWith("-") ? `unrecognized arguments: ${first}` : `argument subparser: invalid choice: '${first}' (choose from 'serve')`);
  }
  if (wantsHelp(rest)) {
    console.log(await helpAs("serve", "vllm", "serve"));
    return 0;
  }
  return llamux(["serve", "--profile", "b", ...rest]);
}
