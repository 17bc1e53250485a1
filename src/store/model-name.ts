// Model names as Ollama writes them: `[host/][namespace/]model[:tag]`, with the defaults
// registry.ollama.ai, library and latest. Hugging Face names keep their host (`hf.co/<org>/<repo>:<quant>`);
// `huggingface.co` is the same hub and is stored as `hf.co`.

export const DEFAULT_HOST = "registry.ollama.ai";
export const DEFAULT_NAMESPACE = "library";
export const DEFAULT_TAG = "latest";
export const HUB_HOST = "hf.co";

const HOST_ALIASES: Record<string, string> = { "huggingface.co": HUB_HOST, "www.huggingface.co": HUB_HOST, "hf.co": HUB_HOST };

export interface ModelName {
  host: string;
  namespace: string;
  model: string;
  tag: string;
}

// Each part starts with a letter, digit or underscore (so "." and ".." can never be a path part).
const PART_PATTERNS = {
  host: /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,349}$/,
  namespace: /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,79}$/,
  // Hugging Face allows repository names of up to 96 characters, Ollama 80.
  model: /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,95}$/,
  tag: /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,79}$/,
} as const;

export class ModelNameError extends TypeError {
  constructor(
    readonly input: string,
    readonly reason: string,
  ) {
    super(`Cannot parse model name "${input}": ${reason}`);
    this.name = "ModelNameError";
  }
}

/** Parses a name, filling in the defaults; throws ModelNameError for anything that is not a valid name. */
export function parseModelName(input: string): ModelName {
  const fail = (reason: string): never => {
    throw new ModelNameError(input, reason);
  };
  let text = input.trim().replace(/^https?:\/\//, "");
  if (text === "") fail("name is empty");
  const lastSlash = text.lastIndexOf("/");
  const colon = text.indexOf(":", lastSlash + 1);
  let tag = DEFAULT_TAG;
  if (colon >= 0) {
    tag = text.slice(colon + 1);
    text = text.slice(0, colon);
  }
  const parts = text.split("/");
  if (parts.length > 3) fail("a name has at most three parts, host/namespace/model");
  const model = parts.at(-1)!;
  const namespace = parts.length >= 2 ? parts.at(-2)! : DEFAULT_NAMESPACE;
  const rawHost = parts.length === 3 ? parts[0]! : DEFAULT_HOST;
  const host = HOST_ALIASES[rawHost.toLowerCase()] ?? rawHost;
  const name = { host, namespace, model, tag };
  for (const part of ["host", "namespace", "model", "tag"] as const) {
    if (name[part] === "") fail(`the ${part} is empty`);
    if (!PART_PATTERNS[part].test(name[part])) fail(`"${name[part]}" is not a valid ${part}`);
  }
  return name;
}

/** The name, or undefined when it does not parse. */
export function tryParseModelName(input: string): ModelName | undefined {
  try {
    return parseModelName(input);
  } catch {
    return undefined;
  }
}

/** `host/namespace/model:tag`, every part spelled out. */
export function formatFullModelName(name: ModelName): string {
  return `${name.host}/${name.namespace}/${name.model}:${name.tag}`;
}

/** The shortest form that parses back to the same name, as `ollama list` shows it (`llama3.2:latest`). */
export function formatModelName(name: ModelName): string {
  if (name.host !== DEFAULT_HOST) return formatFullModelName(name);
  if (name.namespace !== DEFAULT_NAMESPACE) return `${name.namespace}/${name.model}:${name.tag}`;
  return `${name.model}:${name.tag}`;
}

/** Equal names up to case (Ollama matches local names case-insensitively). */
export function sameModelName(a: ModelName, b: ModelName): boolean {
  return formatFullModelName(a).toLowerCase() === formatFullModelName(b).toLowerCase();
}

/** The parts of the manifest path under `manifests/`. */
export function manifestPathParts(name: ModelName): [string, string, string, string] {
  return [name.host, name.namespace, name.model, name.tag];
}

/** True for names on the Hugging Face hub. */
export function isHubName(name: ModelName): boolean {
  return name.host === HUB_HOST;
}
