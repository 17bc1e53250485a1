// Ollama's capability gate: a request that needs what the model cannot do (tools, thinking, insert)
// is a 400 `"<model>" does not support <capability>`, told before the model loads.
import type { Capability } from "../../store/capabilities.ts";
import type { ServedModel } from "../model-service.ts";
import { capabilitiesOf } from "./model-description.ts";
import { doesNotSupport } from "./model-request.ts";

export interface NeededCapabilities {
  tools?: boolean;
  think?: boolean | string | null;
  suffix?: boolean;
}

/** The model's capabilities (read from its file unless given), after refusing a request that needs one it lacks. */
export function checkCapabilities(model: ServedModel, needs: NeededCapabilities, capabilities = capabilitiesOf(model)): Capability[] {
  if (needs.tools && !capabilities.includes("tools")) throw doesNotSupport(model, "tools");
  if (needs.suffix && !capabilities.includes("insert")) throw doesNotSupport(model, "insert");
  const thinkOn = needs.think !== undefined && needs.think !== null && needs.think !== false;
  if (thinkOn && !capabilities.includes("thinking")) throw doesNotSupport(model, "thinking");
  return capabilities;
}
