// The SDK's check of a forced tool choice, before anything is sent or rendered.
import type { ToolChoice } from "./generation-options.ts";

/** A forced choice that names a function not registered. */
export class UnknownToolChoiceError extends TypeError {
  constructor(name: string) {
    super(`Cannot force a call of "${name}": no function of that name is registered`);
    this.name = "UnknownToolChoiceError";
  }
}

/** Throws when `choice` forces a call that no registered function can answer. */
export function checkToolChoice(choice: ToolChoice, functions: Array<{ name: string }>): void {
  if (typeof choice === "object" && !functions.some((fn) => fn.name === choice.name)) throw new UnknownToolChoiceError(choice.name);
  if (choice === "required" && functions.length === 0) throw new TypeError('Cannot force a function call: toolChoice "required" needs at least one registered function or MCP tool');
}
