// The model store, in Ollama's layout so an Ollama model directory can be used as it is:
//   <root>/blobs/sha256-<hex>                          content-addressed files (GGUF, templates, params, ...)
//   <root>/manifests/<host>/<namespace>/<model>/<tag>  one JSON manifest per name, listing its blobs
// Every write is atomic (see atomic-file.ts); names are matched case-insensitively and keep the case
// they were first stored with.
import { existsSync, readdirSync, readFileSync, rmdirSync, statSync } from "node:fs";
import { rm } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { isTempFile, syncDirectory, writeFileAtomic } from "./atomic-file.ts";
import { type BlobSource, type ImportBlobOptions, type ImportedBlob, writeBlob } from "./blob-writer.ts";
import { MAX_MANIFEST_BYTES, type Manifest, digestHex, digestOf, manifestSize, parseManifest, serializeManifest } from "./manifest.ts";
import { type ModelName, formatModelName, manifestPathParts, parseModelName, tryParseModelName } from "./model-name.ts";
import { type ResolvedModel, resolveManifest } from "./resolved-model.ts";
import { logger } from "../log.ts";

export * from "./manifest.ts";
export type { ResolvedModel, ModelConfig } from "./resolved-model.ts";
export { DigestMismatchError, type BlobSource, type ImportedBlob, type ImportBlobOptions } from "./blob-writer.ts";

const log = logger("store");
let manifestWrites: Promise<void> = Promise.resolve();

export interface StoredModel {
  /** as `ollama list` shows it: `llama3.2:latest`, `hf.co/org/repo:Q4_K_M` */
  name: string;
  parsedName: ModelName;
  /** first 12 hex characters of the manifest's sha256 */
  id: string;
  /** sha256 hex of the manifest file */
  digest: string;
  size: number;
  modifiedAt: Date;
  manifest: Manifest;
}

export interface ModelStoreOptions {
  root?: string;
  /** Honour OLLAMA_MODELS after LLAMUX_MODELS (where llamux reads Ollama's environment). */
  ollamaModels?: boolean;
}

/** A name that is not in the store. Message in Ollama's words: `model 'x' not found`. */
export class ModelNotFoundError extends Error {
  constructor(readonly model: string) {
    super(`model '${model}' not found`);
    this.name = "ModelNotFoundError";
  }
}

/** options.root, else LLAMUX_MODELS, else OLLAMA_MODELS (with options.ollamaModels), else ~/.llamux/models. */
export function storeRoot(options: ModelStoreOptions = {}): string {
  if (options.root) return options.root;
  if (process.env.LLAMUX_MODELS) return process.env.LLAMUX_MODELS;
  if (options.ollamaModels && process.env.OLLAMA_MODELS) return process.env.OLLAMA_MODELS;
  return join(homedir(), ".llamux", "models");
}

function entriesOf(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

export class ModelStore {
  readonly blobsDir: string;
  readonly manifestsDir: string;
  private readonly readManifests = new Map<string, { version: string; stored: StoredModel }>();

  /** Opens the store (nothing is created until something is written). */
  static open(options: ModelStoreOptions = {}): ModelStore {
    return new ModelStore(storeRoot(options));
  }

  constructor(readonly root: string) {
    this.blobsDir = join(root, "blobs");
    this.manifestsDir = join(root, "manifests");
  }

  /** `<root>/blobs/sha256-<hex>` for `sha256:<hex>` (or `sha256-<hex>`). */
  blobPath(digest: string): string {
    return join(this.blobsDir, `sha256-${digestHex(digest)}`);
  }

  hasBlob(digest: string): boolean {
    return existsSync(this.blobPath(digest));
  }

  /** Stores content as a blob (atomic; same content twice is one blob). */
  importBlob(source: BlobSource, options: ImportBlobOptions = {}): Promise<ImportedBlob> {
    return writeBlob(this.blobsDir, (digest) => this.blobPath(digest), source, options);
  }

  /** Writes the manifest of `name` (atomic). A name stored under another case is overwritten in place. */
  writeManifest(name: string, manifest: Manifest): Promise<void> {
    return this.writeManifestBytes(name, serializeManifest(manifest));
  }

  /** Writes manifest bytes verbatim (registry pulls keep the registry's bytes, so the id matches). */
  async writeManifestBytes(name: string, bytes: Uint8Array | string): Promise<void> {
    const text = typeof bytes === "string" ? bytes : new TextDecoder().decode(bytes);
    if (Buffer.byteLength(text) > MAX_MANIFEST_BYTES) throw new RangeError(`Cannot write manifest "${name}": it is larger than ${MAX_MANIFEST_BYTES} bytes`);
    parseManifest(text, name);
    const parsed = parseModelName(name);
    // one at a time, so two writes of one name in different cases find each other's directories
    const write = manifestWrites.then(() => writeFileAtomic(this.manifestPath(parsed), bytes));
    manifestWrites = write.catch(() => {});
    await write;
  }

  readManifest(name: string): Manifest | undefined {
    return this.find(name)?.manifest;
  }

  /** The model's manifest file as it is stored (a push sends these bytes, so the registry's id matches). */
  manifestBytes(name: string): Uint8Array | undefined {
    const parsed = tryParseModelName(name);
    const path = parsed && this.findManifestPath(parsed);
    return path ? new Uint8Array(readFileSync(path)) : undefined;
  }

  /** Every stored model, newest first. Unreadable manifests are skipped with a warning. */
  list(): StoredModel[] {
    const models: StoredModel[] = [];
    const seen = new Set<string>();
    for (const host of entriesOf(this.manifestsDir)) {
      for (const namespace of entriesOf(join(this.manifestsDir, host))) {
        for (const model of entriesOf(join(this.manifestsDir, host, namespace))) {
          for (const tag of entriesOf(join(this.manifestsDir, host, namespace, model))) {
            if (isTempFile(tag)) continue;
            const path = join(this.manifestsDir, host, namespace, model, tag);
            seen.add(path);
            const stored = this.readStored(path);
            if (stored) models.push(stored);
          }
        }
      }
    }
    for (const path of this.readManifests.keys()) if (!seen.has(path)) this.readManifests.delete(path);
    return models.sort((a, b) => b.modifiedAt.getTime() - a.modifiedAt.getTime());
  }

  /** The stored model called `name` (any case), or undefined; an invalid name is simply not found. */
  find(name: string): StoredModel | undefined {
    const parsed = tryParseModelName(name);
    const path = parsed && this.findManifestPath(parsed);
    return path ? this.readStored(path) : undefined;
  }

  /** The model's files and text layers, or undefined when no model has that name. */
  resolve(name: string): ResolvedModel | undefined {
    const stored = this.find(name);
    if (!stored) return undefined;
    return resolveManifest(
      { name: stored.name, manifestDigest: stored.digest, manifest: stored.manifest, size: stored.size, modifiedAt: stored.modifiedAt },
      (digest) => this.blobPath(digest),
    );
  }

  /** Removes the model's manifest, then those of its blobs no other manifest references. */
  async remove(name: string): Promise<void> {
    const parsed = tryParseModelName(name);
    const path = parsed && this.findManifestPath(parsed);
    if (!path) throw new ModelNotFoundError(name);
    const stored = this.readStored(path);
    await rm(path, { force: true });
    syncDirectory(dirname(path));
    this.removeEmptyManifestDirs(dirname(path));
    if (!stored) return;
    // Only this model's blobs: a blob nothing references yet may belong to a create or pull in progress.
    const stillUsed = this.referencedDigests();
    for (const layer of [stored.manifest.config, ...stored.manifest.layers]) {
      if (!stillUsed.has(digestHex(layer.digest))) await rm(this.blobPath(layer.digest), { force: true });
    }
  }

  /** Gives the model a second name (same manifest bytes, so the same id). */
  async copy(source: string, destination: string): Promise<void> {
    const parsedSource = tryParseModelName(source);
    const path = parsedSource && this.findManifestPath(parsedSource);
    if (!path) throw new ModelNotFoundError(source);
    await this.writeManifestBytes(destination, readFileSync(path));
  }

  /** sha256 hex of every blob some manifest references. */
  referencedDigests(): Set<string> {
    const digests = new Set<string>();
    for (const model of this.list()) {
      for (const layer of [model.manifest.config, ...model.manifest.layers]) digests.add(digestHex(layer.digest));
    }
    return digests;
  }

  /** The manifest path of `name`, each part spelled as an existing directory spells it (any case). */
  private manifestPath(name: ModelName): string {
    let path = this.manifestsDir;
    for (const part of manifestPathParts(name)) {
      const existing = existsSync(join(path, part)) ? part : entriesOf(path).find((entry) => entry.toLowerCase() === part.toLowerCase());
      path = join(path, existing ?? part);
    }
    return path;
  }

  private findManifestPath(name: ModelName): string | undefined {
    const path = this.manifestPath(name);
    return existsSync(path) && statSync(path).isFile() ? path : undefined;
  }

  /**
   * The manifest file at `path`, parsed once for each version of the file (its inode, size and time), so
   * listing the store reads and hashes only what changed. A file over MAX_MANIFEST_BYTES is not read.
   */
  private readStored(path: string): StoredModel | undefined {
    const parts = relative(this.manifestsDir, path).split(sep);
    const parsedName = tryParseModelName(`${parts[0]}/${parts[1]}/${parts[2]}:${parts[3]}`);
    if (parts.length !== 4 || !parsedName) return undefined;
    try {
      const stat = statSync(path);
      if (stat.size > MAX_MANIFEST_BYTES) throw new RangeError(`larger than ${MAX_MANIFEST_BYTES} bytes`);
      const version = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
      const known = this.readManifests.get(path);
      if (known?.version === version) return known.stored;
      const bytes = readFileSync(path);
      const manifest = parseManifest(bytes.toString("utf8"), formatModelName(parsedName));
      const digest = digestHex(digestOf(bytes));
      // every reader gets this one object until the file changes: frozen, so that none can change it for the others
      for (const layer of [manifest.config, ...manifest.layers]) Object.freeze(layer);
      Object.freeze(manifest.layers);
      const stored = Object.freeze({ name: formatModelName(parsedName), parsedName: Object.freeze(parsedName), id: digest.slice(0, 12), digest, size: manifestSize(manifest), modifiedAt: stat.mtime, manifest: Object.freeze(manifest) });
      this.readManifests.set(path, { version, stored });
      return stored;
    } catch (error) {
      log.warn(`skipping ${path}: ${(error as Error).message}`);
      return undefined;
    }
  }

  private removeEmptyManifestDirs(dir: string): void {
    while (dir.startsWith(this.manifestsDir + sep)) {
      try {
        rmdirSync(dir); // fails when not empty, which ends the walk
      } catch {
        return;
      }
      dir = dirname(dir);
    }
  }
}
