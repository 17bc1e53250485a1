// `llamux show MODEL`: what a stored model is and how it was built, as `ollama show` prints it.
import { parseArgs } from "node:util";
import { ModelNotFoundError } from "../store/model-store.ts";
import { formatDetails, formatParameters, modelDetails } from "./model-details.ts";
import { openStore } from "./model-store-access.ts";
import { UsageError } from "../usage-error.ts";
import { helpFlag, renderHelp, type Flags, type HelpPage } from "./help-layout.ts";

export const showFlags = {
  modelfile: { type: "boolean", help: "the Modelfile that rebuilds the model" },
  parameters: { type: "boolean", help: "its PARAMETER values" },
  template: { type: "boolean", help: "its prompt template (the Modelfile TEMPLATE, else the GGUF's chat template)" },
  system: { type: "boolean", help: "its system prompt" },
  license: { type: "boolean", help: "its license" },
  verbose: { type: "boolean", short: "v", help: "accepted as ollama show takes it; the details are always shown in full" },
  ...helpFlag,
} as const satisfies Flags;

export const showPage: HelpPage = {
  usage: ["llamux show MODEL [options]"],
  description: `Shows a stored model: its architecture, size, context, quantization, capabilities, parameters, system
prompt and license. One of the options prints only that part.`,
  flags: showFlags,
};

export const showHelp = renderHelp(showPage);

const PARTS = ["modelfile", "parameters", "template", "system", "license"] as const;

export async function showCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: showFlags,
  });
  if (values.help) {
    console.log(showHelp);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError("show needs one model name");
  const chosen = PARTS.filter((part) => values[part]);
  if (chosen.length > 1) throw new UsageError("only one of --modelfile, --parameters, --template, --system or --license may be given");
  const name = positionals[0]!;
  const resolved = openStore().resolve(name);
  if (!resolved) throw new ModelNotFoundError(name);
  const details = modelDetails(resolved);
  switch (chosen[0]) {
    case "modelfile":
      process.stdout.write(details.modelfile);
      break;
    case "parameters":
      console.log(formatParameters(details.parameterValues));
      break;
    case "template":
      console.log(details.template);
      break;
    case "system":
      console.log(details.system);
      break;
    case "license":
      console.log(details.license);
      break;
    default:
      process.stdout.write(formatDetails(details));
  }
  return 0;
}
