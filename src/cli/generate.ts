// `llamux generate kube`: Kubernetes manifests for a pool of profile-b replicas (see docs/deployment.md,
// "When one machine is not enough"), to standard output or one file per document in a folder.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { isModelPath, type KubeDocument, kubeManifests } from "../container/kube-manifests.ts";
import { isHubId } from "../store/pull.ts";
import { UsageError, wholeNumberOption } from "../usage-error.ts";
import { llamuxVersion } from "../version.ts";
import { helpFlag, renderHelp, type Flags, type HelpPage } from "./help-layout.ts";

export const generateFlags = {
  model: { type: "string", value: "MODEL", help: "a Hugging Face id (ORG/NAME, pulled into each pod by an init container; the secret hf-token, key token, gives HF_TOKEN) or an absolute GGUF path on the volume claim NAME-models, mounted read-only at the file's folder (required)" },
  replicas: { type: "string", value: "N", help: "replicas, and KEDA's minimum (default 1; KEDA scales up to 4 times as many)" },
  image: { type: "string", value: "IMAGE", help: `the image (default llamux:${llamuxVersion}, llamux:${llamuxVersion}-cuda with --gpu nvidia: make image)` },
  gpu: { type: "string", value: "nvidia", help: "one NVIDIA GPU per replica (nvidia.com/gpu) and the CUDA image" },
  name: { type: "string", value: "NAME", help: "object names and the app label (default llamux)" },
  "no-gateway": { type: "boolean", help: "leave out the InferencePool, InferenceObjective and HTTPRoute" },
  "no-autoscale": { type: "boolean", help: "leave out the ScaledObject" },
  output: { type: "string", short: "o", value: "DIR", help: "write one file per document (deployment.yaml, ...) instead of standard output" },
  ...helpFlag,
} as const satisfies Flags;

export const generatePage: HelpPage = {
  usage: ["llamux generate kube --model MODEL [options]"],
  description: `Writes Kubernetes manifests for replicas of llamux's profile-b container image (vLLM's interface):
a Deployment (readiness on /health, which answers 503 until the model has loaded; liveness; resources),
a Service, a PodMonitor, a KEDA ScaledObject on vllm:num_requests_waiting, and the Gateway API Inference
Extension's InferencePool with an InferenceObjective and an HTTPRoute.`,
  flags: generateFlags,
};

export const generateHelp = renderHelp(generatePage);

/** Renders documents as one YAML stream. */
export function toYamlStream(documents: KubeDocument[]): string {
  // through JSON first: shared objects would otherwise become YAML anchors and aliases
  return documents.map((document) => `---\n${Bun.YAML.stringify(JSON.parse(JSON.stringify(document.body)), null, 2)}\n`).join("");
}

export async function generateCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args, allowPositionals: true, strict: true,
    options: generateFlags,
  });
  if (values.help) {
    console.log(generateHelp);
    return 0;
  }
  if (positionals[0] !== "kube" || positionals.length > 1) throw new UsageError(`generate needs a target: "llamux generate kube" (got ${positionals.join(" ") || "none"})`);
  const model = values.model;
  if (!model) throw new UsageError("generate kube needs --model: a Hugging Face id (ORG/NAME) or an absolute GGUF path");
  if (!isModelPath(model) && !isHubId(model)) throw new UsageError(`--model must be a Hugging Face id (ORG/NAME) or an absolute path, got "${model}"`);
  if (values.gpu !== undefined && values.gpu !== "nvidia") throw new UsageError(`--gpu must be nvidia, got "${values.gpu}"`);
  const name = values.name ?? "llamux";
  // a DNS-1035 label: Service names must be one
  if (!/^[a-z]([-a-z0-9]{0,40}[a-z0-9])?$/.test(name)) throw new UsageError(`--name must be lower-case letters, digits and dashes, starting with a letter (at most 42), got "${name}"`);
  const gpu = values.gpu as "nvidia" | undefined;
  const documents = kubeManifests({
    name, model, gpu,
    image: values.image ?? `llamux:${llamuxVersion}${gpu ? "-cuda" : ""}`,
    replicas: wholeNumberOption(values.replicas, "replicas", 1, 1000) ?? 1,
    gateway: !values["no-gateway"],
    autoscale: !values["no-autoscale"],
  });
  if (values.output === undefined) {
    process.stdout.write(toYamlStream(documents));
    return 0;
  }
  mkdirSync(values.output, { recursive: true });
  for (const document of documents) {
    const path = join(values.output, `${document.kind.toLowerCase()}.yaml`);
    writeFileSync(path, toYamlStream([document]));
    console.error(`wrote ${path}`);
  }
  return 0;
}
