// vLLM's LoRA flags on `llamux serve`: --enable-lora, --lora-modules (name=path, or vLLM's JSON with
// base_model_name; several after one flag, as vLLM's nargs="+" takes them), --max-loras, --max-lora-rank.
import { DEFAULT_MAX_LORA_RANK, DEFAULT_MAX_LORAS, MAX_LOADED_ADAPTERS } from "../engine/lora-adapters.ts";
import type { LoraModuleSpec, LoraServing } from "../server/lora-registry.ts";
import { UsageError, wholeNumberOption } from "../usage-error.ts";
import type { Flags } from "./help-layout.ts";

export const loraFlags = {
  "enable-lora": { type: "boolean", help: "serve LoRA adapters per request on MODEL's engine: a request whose model names an adapter runs with it (GGUF adapters, as llama.cpp loads them)" },
  "lora-modules": { type: "string", multiple: true, value: "SPEC...", help: `adapters to serve: name=path, or '{"name": N, "path": P, "base_model_name": M}' (several after one flag, or the flag repeated)` },
  "max-loras": { type: "string", value: "N", help: `adapters whose requests may run at once (default ${DEFAULT_MAX_LORAS}); requests for others wait. Adapters take turns of a few decode steps, as llama.cpp applies one per context` },
  "max-lora-rank": { type: "string", value: "N", help: `largest adapter rank loaded (default ${DEFAULT_MAX_LORA_RANK})` },
} as const satisfies Flags;

export interface LoraFlagValues {
  "enable-lora"?: boolean;
  "lora-modules"?: string[];
  "max-loras"?: string;
  "max-lora-rank"?: string;
}

/**
 * vLLM's `--lora-modules a=x b=y` as `--lora-modules a=x --lora-modules b=y`: the values after the flag up
 * to the next option are its own (parseArgs would take them as positionals).
 */
export function expandLoraModules(args: readonly string[]): string[] {
  const expanded: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg !== "--lora-modules") {
      expanded.push(arg);
      continue;
    }
    let taken = 0;
    while (i + 1 < args.length && !args[i + 1]!.startsWith("-")) {
      expanded.push("--lora-modules", args[++i]!);
      taken++;
    }
    if (taken === 0) expanded.push(arg);
  }
  return expanded;
}

/** One --lora-modules value, as vLLM reads it: `name=path` when it has a "=" and no ",", else JSON. */
export function parseLoraModule(value: string): LoraModuleSpec {
  if (value.includes("=") && !value.includes(",") && !value.trimStart().startsWith("{")) {
    const at = value.indexOf("=");
    const name = value.slice(0, at);
    const path = value.slice(at + 1);
    if (!name || !path) throw new UsageError(`--lora-modules needs name=path, got "${value}"`);
    return { name, path };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new UsageError(`Invalid JSON format for --lora-modules: ${value}`);
  }
  const { name, path, base_model_name: base, ...rest } = (typeof parsed === "object" && parsed !== null ? parsed : {}) as Record<string, unknown>;
  if (typeof name !== "string" || !name || typeof path !== "string" || !path || (base !== undefined && base !== null && typeof base !== "string")) {
    throw new UsageError(`Invalid fields for --lora-modules: ${value} - needs "name" and "path" strings, and "base_model_name" a string if given`);
  }
  const unknown = Object.keys(rest);
  if (unknown.length) throw new UsageError(`Invalid fields for --lora-modules: ${value} - unknown ${unknown.map((key) => `"${key}"`).join(", ")}`);
  return { name, path, ...(typeof base === "string" ? { base } : {}) };
}

/** The LoRA settings the flags give, or undefined without --enable-lora. */
export function loraFromFlags(values: LoraFlagValues): LoraServing | undefined {
  const modules = (values["lora-modules"] ?? []).filter((value) => value !== "").map(parseLoraModule);
  if (!values["enable-lora"]) {
    const given = ["lora-modules", "max-loras", "max-lora-rank"].filter((flag) => values[flag as keyof LoraFlagValues] !== undefined);
    if (given.length) throw new UsageError(`--${given[0]} needs --enable-lora`);
    return undefined;
  }
  const names = new Set<string>();
  for (const { name } of modules) {
    if (names.has(name)) throw new UsageError(`--lora-modules names "${name}" twice`);
    names.add(name);
  }
  if (modules.length > MAX_LOADED_ADAPTERS) throw new UsageError(`--lora-modules gives ${modules.length} adapters; at most ${MAX_LOADED_ADAPTERS} are served`);
  return {
    modules,
    maxLoras: wholeNumberOption(values["max-loras"], "max-loras", 1, MAX_LOADED_ADAPTERS) ?? DEFAULT_MAX_LORAS,
    maxRank: wholeNumberOption(values["max-lora-rank"], "max-lora-rank", 1, 65536) ?? DEFAULT_MAX_LORA_RANK,
  };
}
