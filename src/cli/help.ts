// `llamux --help` and `llamux help [COMMAND]`.
import { parseArgs } from "node:util";
import { commands, findCommand } from "./commands.ts";
import { UsageError } from "../usage-error.ts";

export const helpHelp = `Usage: llamux help [COMMAND]

Shows the help of llamux, or of COMMAND.

Options:
  -h, --help   show this help`;

/** The top-level help: usage, the visible commands and the environment variables llamux reads. */
export function topLevelHelp(): string {
  const visible = Object.entries(commands).filter(([, entry]) => !entry.hidden);
  const width = Math.max(...visible.map(([name]) => name.length));
  const list = visible.map(([name, entry]) => `  ${name.padEnd(width)}   ${entry.summary}`).join("\n");
  return `llamux: serves local language models through llama.cpp

Usage: llamux [-h | --help] [-v | --version] COMMAND [ARGS...]

Commands:
${list}

Options:
  -h, --help      show this help
  -v, --version   print the versions of llamux and llama.cpp

Environment:
  LLAMUX_LOG_LEVEL   error, warn, info or debug (default info); debug includes llama.cpp's own log
  LLAMUX_LIB_DIR     load llama.cpp's libraries from this directory instead of the built-in ones
  LLAMUX_CACHE_DIR   where the executable extracts its libraries (default $XDG_CACHE_HOME/llamux or ~/.cache/llamux)

Started under the name ollama, vllm or lms (a symbolic link or a copy), llamux speaks that tool's command
line: "ollama serve", "vllm serve org/model", "lms server start" (LLAMUX_PERSONA does the same).

Run "llamux COMMAND --help" for the options of a command.`;
}

export async function helpCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { help: { type: "boolean", short: "h" } } });
  if (values.help) {
    console.log(helpHelp);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`Cannot show help for "${positionals.join(" ")}": give one command`);
  const name = positionals[0];
  if (name === undefined) {
    console.log(topLevelHelp());
    return 0;
  }
  const entry = findCommand(name);
  if (!entry) throw new UsageError(`Cannot show help for "${name}": no such command`);
  console.log((await entry.load()).help);
  return 0;
}
