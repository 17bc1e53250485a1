// Ollama's manifests (Docker image manifest v2 with Ollama's layer media types) and blob digests.
import { createHash } from "node:crypto";

export interface ManifestLayer {
  mediaType: string;
  /** `sha256:<64 hex>` */
  digest: string;
  size: number;
  /** where the layer came from (Ollama writes it for layers inherited from another model) */
  from?: string;
}

export interface Manifest {
  schemaVersion: 2;
  mediaType: string;
  config: ManifestLayer;
  layers: ManifestLayer[];
}

/**
 * The largest manifest a pull accepts or the store reads: 4 MiB, the bound of Docker's registry client
 * (distribution's maxManifestBodySize) and of containers/image. Ollama's own client reads manifests
 * whole; a real one is a few KiB.
 */
export const MAX_MANIFEST_BYTES = 4 << 20;

export const MANIFEST_MEDIA_TYPE = "application/vnd.docker.distribution.manifest.v2+json";
export const CONFIG_MEDIA_TYPE = "application/vnd.docker.container.image.v1+json";

const OLLAMA_IMAGE = "application/vnd.ollama.image.";
/** Layer media types: `layerMediaType.model` is `application/vnd.ollama.image.model`, and so on. */
export const layerMediaType = {
  model: `${OLLAMA_IMAGE}model`,
  projector: `${OLLAMA_IMAGE}projector`,
  adapter: `${OLLAMA_IMAGE}adapter`,
  template: `${OLLAMA_IMAGE}template`,
  /** the legacy name of a template layer */
  prompt: `${OLLAMA_IMAGE}prompt`,
  system: `${OLLAMA_IMAGE}system`,
  params: `${OLLAMA_IMAGE}params`,
  messages: `${OLLAMA_IMAGE}messages`,
  license: `${OLLAMA_IMAGE}license`,
  /** a draft model for speculative decoding (Modelfile DRAFT, /api/create draft_files) */
  draft: `${OLLAMA_IMAGE}draft`,
} as const;

const DIGEST_PATTERN = /^sha256[:-]([0-9a-fA-F]{64})$/;

/** The 64 lowercase hex characters of a `sha256:<hex>` (or `sha256-<hex>`) digest; throws on anything else. */
export function digestHex(digest: string): string {
  const match = DIGEST_PATTERN.exec(digest);
  if (!match) throw new TypeError(`Cannot use digest "${digest}": expected sha256:<64 hex digits>`);
  return match[1]!.toLowerCase();
}

export function isDigest(digest: string): boolean {
  return DIGEST_PATTERN.test(digest);
}

/** `sha256:<hex>` of the bytes. */
export function digestOf(bytes: Uint8Array | string): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** Sum of the config's and the layers' sizes, as Ollama reports a model's size. */
export function manifestSize(manifest: Manifest): number {
  return manifest.layers.reduce((sum, layer) => sum + layer.size, manifest.config.size);
}

function layerOf(value: unknown, where: string, fail: (reason: string) => never): ManifestLayer {
  const layer = value as Partial<ManifestLayer> | null;
  if (typeof layer !== "object" || layer === null) return fail(`${where} is not an object`);
  if (typeof layer.mediaType !== "string") fail(`${where} has no mediaType`);
  if (typeof layer.digest !== "string" || !isDigest(layer.digest)) fail(`${where} has no valid digest`);
  if (typeof layer.size !== "number" || !Number.isSafeInteger(layer.size) || layer.size < 0) fail(`${where} has no valid size`);
  return layer as ManifestLayer;
}

/** Parses and checks a manifest file; `label` names it in errors. */
export function parseManifest(text: string, label: string): Manifest {
  const fail = (reason: string): never => {
    throw new SyntaxError(`Cannot read manifest "${label}": ${reason}`);
  };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return fail(`not JSON (${(error as Error).message})`);
  }
  const manifest = value as Partial<Manifest> | null;
  if (typeof manifest !== "object" || manifest === null) return fail("not a JSON object");
  if (manifest.schemaVersion !== 2) fail(`schemaVersion is ${JSON.stringify(manifest.schemaVersion)}, expected 2`);
  if (!Array.isArray(manifest.layers)) fail("layers is not an array");
  layerOf(manifest.config, "config", fail);
  manifest.layers!.forEach((layer, i) => layerOf(layer, `layer ${i}`, fail));
  return manifest as Manifest;
}

/** The manifest as llamux writes it: compact JSON, as Ollama's encoder does. */
export function serializeManifest(manifest: Manifest): string {
  return JSON.stringify(manifest);
}
