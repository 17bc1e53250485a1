// The container image's entry point: vLLM's container interface (`docker run IMAGE --model ORG/NAME
// --served-model-name x ...`, flags as `vllm serve` takes them) on 0.0.0.0:8000, with the model cache
// at $LLAMUX_MODELS (/root/.cache/huggingface in the image, where vLLM's image keeps its hub cache).
import { dropRootIfAllowed, parseContainerUser } from "../container/run-as.ts";
import { storeRoot } from "../store/model-store.ts";
import { helpFlag, renderHelp, type HelpPage } from "./help-layout.ts";
import { envVar } from "../config.ts";

export const serveContainerPage: HelpPage = {
  usage: ["llamux serve-container [vllm serve flags]"],
  description: `The container image's entry point: "llamux serve --profile b --host 0.0.0.0" (port 8000) with the
arguments given to the container, as vLLM's image takes them (--model ORG/NAME or a path,
--served-model-name, --max-model-len, --api-key, ...). A model missing from the cache is pulled
(HF_TOKEN and HF_ENDPOINT from the environment). Started as root, it switches to the image's user
(LLAMUX_CONTAINER_USER, default 1000:1000) when the model cache lets that user write.`,
  flags: helpFlag,
  environment: ["LLAMUX_CONTAINER_USER", "HF_TOKEN", "HF_ENDPOINT"].map(envVar),
};

export const serveContainerHelp = renderHelp(serveContainerPage);

export async function serveContainerCommand(args: string[]): Promise<number | undefined> {
  if (args.includes("-h") || args.includes("--help")) {
    console.log(serveContainerHelp);
    return 0;
  }
  dropRootIfAllowed(storeRoot(), parseContainerUser(process.env.LLAMUX_CONTAINER_USER));
  const { serveCommand } = await import("./serve.ts");
  // vLLM's image serves on every interface of the container; a --host given to the container wins.
  const host = args.includes("--host") ? [] : ["--host", "0.0.0.0"];
  return serveCommand(["--profile", "b", ...host, ...args]);
}
