// How an error names the model whose own data (chat template, TEMPLATE) failed: a pulled model is
// untrusted input, and the user must know which one to remove or fix.
import { basename } from "node:path";
import type { ModelInfo } from "../engine/types.ts";

/** `model "Name" (file.gguf)`, or just the file when the GGUF has no general.name. */
export function modelLabel(info: Pick<ModelInfo, "path" | "metadata">): string {
  const name = info.metadata?.["general.name"];
  const file = basename(info.path);
  return name ? `model "${name}" (${file})` : `model "${file}"`;
}
