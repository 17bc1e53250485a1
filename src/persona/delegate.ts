// Handing a personality's command to the llamux command that implements it, and showing that
// command's help under the personality's name.
import { findCommand } from "../cli/commands.ts";

const helpFlags = new Set(["-h", "--help"]);

export const wantsHelp = (args: string[]): boolean => args.some((arg) => helpFlags.has(arg));

/** The help of llamux's `command`, its usage lines spelled `persona personaCommand`. */
export async function helpAs(command: string, persona: string, personaCommand: string): Promise<string | undefined> {
  const entry = findCommand(command);
  if (!entry) return undefined;
  const help = (await entry.load()).help;
  return help.replaceAll(`llamux ${command}`, `${persona} ${personaCommand}`);
}
