// LM Studio's KV config stacks (`predictionConfigStack`, `loadConfigStack`): layers of {key, value}
// fields, the later layer winning. The sampling keys are the option table's (src/options/lmstudio-names.ts);
// the keys that shape the prompt and the reply (tools, structured output, system prompt, template,
// reasoning) are read here. A known key with a value of the wrong shape is an error naming the key;
// other keys (GPU split, speculative decoding, MLX, …) are ignored.
import { z } from "zod";
import type { OutputConstraint } from "../../../chat/structured/constraint.ts";
import type { ToolDefinition } from "../../../chat/types.ts";
import type { ToolChoice } from "../../../generation/chat-output.ts";
import { badRequest } from "../../api-error.ts";
import { readLmStudioKeys } from "../../../options/lmstudio-names.ts";
import type { OptionValues } from "../../../options/values.ts";

const kvConfigSchema = z.object({ fields: z.array(z.object({ key: z.string(), value: z.unknown() })).max(1000) });
export const kvConfigStackSchema = z.object({ layers: z.array(z.object({ layerName: z.string(), config: kvConfigSchema })).max(64) });
export type KvConfigStack = z.infer<typeof kvConfigStackSchema>;

/** Later layers win, as in LM Studio's collapseKVStack. */
export function collapse(stack: KvConfigStack | undefined): Map<string, unknown> {
  const map = new Map<string, unknown>();
  for (const layer of stack?.layers ?? []) for (const { key, value } of layer.config.fields) map.set(key, value);
  return map;
}

const toolSchema = z.object({
  type: z.literal("function"),
  function: z.object({ name: z.string().min(1), description: z.string().optional(), parameters: z.record(z.string(), z.unknown()).optional() }),
});
const promptTemplateSchema = z.object({
  type: z.enum(["jinja", "manual"]),
  jinjaPromptTemplate: z.object({ template: z.string() }).optional(),
  manualPromptTemplate: z.object({
    beforeSystem: z.string(), afterSystem: z.string(), beforeUser: z.string(), afterUser: z.string(), beforeAssistant: z.string(), afterAssistant: z.string(),
  }).optional(),
  stopStrings: z.array(z.string()).optional(),
});

const predictionKeys = {
  "llm.prediction.structured": z.object({ type: z.enum(["none", "json", "gbnf"]), jsonSchema: z.unknown().optional(), gbnfGrammar: z.string().optional() }),
  "llm.prediction.tools": z.union([
    z.object({ type: z.literal("none") }),
    z.object({ type: z.literal("toolArray"), tools: z.array(toolSchema).max(256).optional(), force: z.boolean().optional() }),
  ]),
  "llm.prediction.systemPrompt": z.string(),
  "llm.prediction.promptTemplate": promptTemplateSchema,
  "llm.prediction.reasoning.parsing": z.object({ enabled: z.boolean() }).loose(),
  /** llamux's own key: OpenAI's tool_choice ("auto", "none", "required" or {name}); the SDK's act() cannot force a call otherwise. */
  "llamux.toolChoice": z.union([z.enum(["auto", "none", "required"]), z.object({ name: z.string().min(1) })]),
} as const;

type PredictionKey = keyof typeof predictionKeys;

function reader(map: Map<string, unknown>) {
  return <K extends PredictionKey>(key: K): z.infer<(typeof predictionKeys)[K]> | undefined => {
    if (!map.has(key)) return undefined;
    const parsed = predictionKeys[key].safeParse(map.get(key));
    if (!parsed.success) throw badRequest(`Invalid value for config key "${key}": ${parsed.error.issues[0]!.message}`, key);
    return parsed.data as z.infer<(typeof predictionKeys)[K]>;
  };
}

export type PromptTemplate = z.infer<typeof promptTemplateSchema>;

export interface PredictionConfig {
  /** The sampling and limit keys as option values (and the load stack's context length). */
  options: OptionValues;
  /** Structured output (JSON schema, JSON, grammar), which the orchestrator turns into a grammar. */
  constraint?: OutputConstraint;
  tools: ToolDefinition[];
  toolChoice?: ToolChoice;
  systemPrompt?: string;
  promptTemplate?: PromptTemplate;
  /** Split `<think>` reasoning off (reasoning.parsing.enabled; default on). */
  reasoning: boolean;
}

function constraintOf(structured: z.infer<(typeof predictionKeys)["llm.prediction.structured"]> | undefined): OutputConstraint | undefined {
  if (!structured || structured.type === "none") return undefined;
  if (structured.type === "gbnf") {
    if (!structured.gbnfGrammar) throw badRequest('A "gbnf" structured setting needs gbnfGrammar', "llm.prediction.structured");
    return { type: "grammar", grammar: structured.gbnfGrammar };
  }
  return structured.jsonSchema === undefined ? { type: "json_object" } : { type: "json_schema", schema: structured.jsonSchema };
}

/** The prediction settings of a collapsed prediction stack (and context length of a load stack). */
export function predictionConfig(map: Map<string, unknown>, loadMap: Map<string, unknown> = new Map()): PredictionConfig {
  const read = reader(map);
  const tools = read("llm.prediction.tools");
  const forced = tools?.type === "toolArray" && tools.force === true;
  const declared = tools?.type === "toolArray" ? tools.tools ?? [] : [];
  // Without tools there is nothing to choose (act()'s last round sends none, whatever else it sends).
  const toolChoice = declared.length === 0 ? undefined : read("llamux.toolChoice") ?? (forced ? "required" : undefined);
  const contextLength = loadMap.get("llm.load.contextLength");
  if (contextLength !== undefined && (!Number.isInteger(contextLength) || (contextLength as number) < 16)) {
    throw badRequest('Invalid value for config key "llm.load.contextLength": expected an integer of at least 16', "llm.load.contextLength");
  }
  const constraint = constraintOf(read("llm.prediction.structured"));
  const options: OptionValues = { ...readLmStudioKeys(map), ...(contextLength !== undefined ? { contextLength: contextLength as number } : {}) };
  if (options.stop?.some((stop) => stop === "")) throw badRequest('Invalid value for config key "llm.prediction.stopStrings": a stop string cannot be empty', "llm.prediction.stopStrings");
  const systemPrompt = read("llm.prediction.systemPrompt");
  const promptTemplate = read("llm.prediction.promptTemplate");
  return {
    options,
    ...(constraint ? { constraint } : {}),
    tools: declared,
    ...(toolChoice !== undefined ? { toolChoice } : {}),
    ...(systemPrompt ? { systemPrompt } : {}),
    ...(promptTemplate ? { promptTemplate } : {}),
    reasoning: read("llm.prediction.reasoning.parsing")?.enabled ?? true,
  };
}

/** The load options a load stack sets that llamux honours: the context length. */
export function loadContextLength(map: Map<string, unknown>, domain: "llm" | "embedding"): number | undefined {
  const key = `${domain}.load.contextLength`;
  const value = map.get(key);
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || (value as number) < 16) throw badRequest(`Invalid value for config key "${key}": expected an integer of at least 16`, key);
  return value as number;
}
