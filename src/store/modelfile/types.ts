// What a parsed Modelfile holds: its instructions in order, and the model definition they add up to.
import type { ParameterValue } from "./parameters.ts";

/** Instructions whose argument is one text value. */
export type TextInstruction = "from" | "template" | "system" | "license" | "adapter" | "requires" | "draft" | "renderer" | "parser";
export type MessageRole = "system" | "user" | "assistant";

export type ModelfileCommand =
  | { kind: TextInstruction; value: string; line: number }
  | { kind: "parameter"; name: string; value: ParameterValue; line: number }
  | { kind: "message"; role: MessageRole; content: string; line: number };

export interface Modelfile {
  commands: ModelfileCommand[];
  /** Things that are accepted but ignored (deprecated parameters), for the user to see. */
  warnings: string[];
}

export interface ModelMessage {
  role: MessageRole;
  content: string;
}

/** A Modelfile folded into one model's settings: later TEMPLATE/SYSTEM win, `stop` lines accumulate. */
export interface ModelDefinition {
  /** FROM values in order: the base model (a path or a model name), then any projector GGUFs. */
  from: string[];
  adapters: string[];
  template?: string;
  system?: string;
  parameters: Record<string, ParameterValue>;
  messages: ModelMessage[];
  license: string[];
  /** Minimum version (REQUIRES), without a leading "v". */
  requires?: string;
  /** DRAFT: a draft model (a path) for speculative decoding. */
  draft?: string;
  /** RENDERER and PARSER: Ollama features llamux does not have; create refuses them. */
  unsupported: Array<{ instruction: string; line: number }>;
}
