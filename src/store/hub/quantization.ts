// Which GGUF file of a hub repository a tag means. Files are named after their quantization
// (`Llama-3.2-1B-Instruct-Q4_K_M.gguf`); the tag is a quantization (any case) or a file name, and no
// tag (`latest`) means Q4_K_M, else the available quantization closest to it.
import type { HubFile } from "./hub-api.ts";

export interface HubQuantization {
  /** e.g. "Q4_K_M"; the file name without .gguf when the name carries no quantization */
  quantization: string;
  file: string;
  size?: number;
  sha256?: string;
}

export const DEFAULT_QUANTIZATION = "Q4_K_M";

/** From Q4_K_M outwards: similar size and quality first, the largest and smallest last. */
const PREFERENCE = [
  "Q4_K_M", "Q4_K_S", "Q4_K_L", "Q4_K_XL", "IQ4_XS", "IQ4_NL", "Q4_0", "Q4_1", "Q5_K_M", "Q5_K_S", "Q5_K_L", "Q5_K_XL",
  "Q5_0", "Q5_1", "Q3_K_L", "Q3_K_XL", "Q3_K_M", "IQ3_M", "Q6_K", "Q6_K_L", "Q6_K_XL", "Q3_K_S", "IQ3_S", "IQ3_XS", "IQ3_XXS",
  "Q8_0", "Q8_K_XL", "Q2_K_L", "Q2_K", "Q2_K_XL", "IQ2_M", "IQ2_S", "IQ2_XS", "IQ2_XXS", "IQ1_M", "IQ1_S", "BF16", "F16", "F32",
];

const QUANTIZATION_PATTERN = /(?:^|[-_.])(I?Q\d(?:_[A-Z0-9]+)*|BF16|F16|F32|FP16|FP32|MXFP4(?:_MOE)?)(?=$|[-_.])/gi;
const SHARD_PATTERN = /-(\d{5})-of-(\d{5})\.gguf$/i;

const baseName = (path: string) => path.slice(path.lastIndexOf("/") + 1);
const isGguf = (path: string) => path.toLowerCase().endsWith(".gguf");
export const isProjectorFile = (path: string) => isGguf(path) && baseName(path).toLowerCase().startsWith("mmproj");

/** The quantization a file name carries ("Q4_K_M"), or undefined. */
export function quantizationOf(path: string): string | undefined {
  const stem = baseName(path).replace(/\.gguf$/i, "").replace(SHARD_PATTERN, "");
  const matches = [...stem.matchAll(QUANTIZATION_PATTERN)];
  const last = matches.at(-1)?.[1]?.toUpperCase();
  if (last === "FP16") return "F16";
  if (last === "FP32") return "F32";
  return last;
}

/** The repository's model GGUFs (projectors left out; a split model by its first part), one per quantization. */
export function listQuantizations(files: HubFile[]): HubQuantization[] {
  const seen = new Set<string>();
  const result: HubQuantization[] = [];
  for (const file of files) {
    if (!isGguf(file.path) || isProjectorFile(file.path)) continue;
    const shard = SHARD_PATTERN.exec(file.path);
    if (shard && shard[1] !== "00001") continue;
    const quantization = quantizationOf(file.path) ?? baseName(file.path).replace(/\.gguf$/i, "");
    if (seen.has(quantization.toUpperCase())) continue;
    seen.add(quantization.toUpperCase());
    result.push({ quantization, file: file.path, ...(file.size !== undefined ? { size: file.size } : {}), ...(file.sha256 ? { sha256: file.sha256 } : {}) });
  }
  const rank = (q: string) => {
    const i = PREFERENCE.indexOf(q.toUpperCase());
    return i < 0 ? PREFERENCE.length : i;
  };
  return result.sort((a, b) => rank(a.quantization) - rank(b.quantization) || a.file.localeCompare(b.file));
}

export class UnknownTagError extends Error {
  constructor(
    readonly repo: string,
    readonly tag: string,
    readonly available: string[],
  ) {
    super(
      available.length === 0
        ? `"${repo}" has no GGUF files`
        : `"${repo}" has no GGUF file for tag "${tag}"; available tags: ${available.join(", ")} (or a file name)`,
    );
    this.name = "UnknownTagError";
  }
}

/** The file for `tag` (a quantization or a file name; `latest` picks the default). */
export function chooseGgufFile(repo: string, files: HubFile[], tag: string): HubFile {
  const quantizations = listQuantizations(files);
  let chosen: HubQuantization | undefined;
  if (tag.toLowerCase() === "latest") chosen = quantizations[0];
  else if (isGguf(tag)) {
    const file = files.find((f) => baseName(f.path).toLowerCase() === tag.toLowerCase() && !isProjectorFile(f.path));
    if (file) return checkNotSplit(file);
  } else chosen = quantizations.find((q) => q.quantization.toLowerCase() === tag.toLowerCase());
  if (!chosen) throw new UnknownTagError(repo, tag, quantizations.map((q) => q.quantization));
  return checkNotSplit(files.find((f) => f.path === chosen!.file)!);
}

function checkNotSplit(file: HubFile): HubFile {
  const shard = SHARD_PATTERN.exec(file.path);
  if (shard) throw new Error(`"${file.path}" is split into ${Number(shard[2])} files; llamux cannot pull split GGUF models yet`);
  return file;
}

/** The repository's vision projector (`mmproj-*.gguf`), preferring F16. */
export function chooseProjector(files: HubFile[]): HubFile | undefined {
  const projectors = files.filter((f) => isProjectorFile(f.path));
  const byPreference = (q: string) => projectors.find((f) => quantizationOf(f.path) === q);
  return byPreference("F16") ?? byPreference("BF16") ?? byPreference("Q8_0") ?? projectors[0];
}
