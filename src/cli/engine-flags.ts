// vLLM's model flags that shape how an engine loads: --chat-template, --gpu-memory-utilization, and the
// tool and reasoning parser choices.
import { existsSync, readFileSync } from "node:fs";
import type { ModelServiceOptions } from "../server/model-service.ts";
import { UsageError } from "./usage-error.ts";
import { logger } from "../log.ts";

const log = logger("serve");

export const engineFlagsHelp = `      --chat-template T         a Jinja chat template, or a file holding one, used instead of the model's
      --gpu-memory-utilization F  share (0-1] of free GPU memory the model's layers may fill; without a GPU
                                the model runs on the CPU
      --enable-auto-tool-choice, --tool-call-parser NAME, --reasoning-parser NAME
                                accepted for vLLM compatibility; tools are rendered into the prompt and the
                                model's reply comes back as text (tool-call parsing is not implemented yet)`;

interface EngineFlagValues {
  "chat-template"?: string;
  "gpu-memory-utilization"?: string;
  "enable-auto-tool-choice"?: boolean;
  "tool-call-parser"?: string;
  "reasoning-parser"?: string;
}

export function engineFlagOptions(values: EngineFlagValues): Pick<ModelServiceOptions, "chatTemplate" | "gpuMemoryFraction"> {
  const out: Pick<ModelServiceOptions, "chatTemplate" | "gpuMemoryFraction"> = {};
  const template = values["chat-template"];
  if (template !== undefined) out.chatTemplate = existsSync(template) ? readFileSync(template, "utf8") : template;
  const fraction = values["gpu-memory-utilization"];
  if (fraction !== undefined) {
    const f = Number(fraction);
    if (!(f > 0 && f <= 1)) throw new UsageError(`--gpu-memory-utilization must be in (0, 1], got "${fraction}"`);
    out.gpuMemoryFraction = f;
  }
  for (const flag of ["enable-auto-tool-choice", "tool-call-parser", "reasoning-parser"] as const) {
    if (values[flag] !== undefined) log.info(`--${flag} accepted: tool-call and reasoning parsing are not implemented yet`);
  }
  return out;
}
