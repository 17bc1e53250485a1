// `llamux --help` and `llamux help [COMMAND]`.
import { parseArgs } from "node:util";
import { envVar } from "../config.ts";
import { commands, findCommand } from "./commands.ts";
import { helpFlag, renderHelp, type Flags, type HelpPage } from "./help-layout.ts";
import { UsageError } from "../usage-error.ts";

/** The flags llamux takes before a command. */
export const topLevelFlags = {
  ...helpFlag,
  version: { type: "boolean", short: "v", help: "print the versions of llamux and llama.cpp" },
} as const satisfies Flags;

export const helpFlags = { ...helpFlag } as const satisfies Flags;

export const helpPage: HelpPage = {
  usage: ["llamux help [COMMAND]"],
  description: "Shows the help of llamux, or of COMMAND.",
  flags: helpFlags,
};

export const helpHelp = renderHelp(helpPage);

/** The top-level help: usage, the visible commands and the environment variables every command reads. */
export function topLevelHelp(): string {
  const visible = Object.entries(commands).filter(([, entry]) => !entry.hidden);
  return renderHelp({
    usage: ["llamux [-h | --help] [-v | --version] COMMAND [ARGS...]"],
    description: `llamux serves local language models through llama.cpp, as Ollama, vLLM and LM Studio do.

Started under the name ollama, vllm or lms (a symbolic link or a copy), llamux speaks that tool's command
line: "ollama serve", "vllm serve org/model", "lms server start" (LLAMUX_PERSONA does the same).`,
    sections: [{ title: "Commands", items: visible.map(([name, entry]) => [name, entry.summary]) }],
    flags: topLevelFlags,
    environment: ["LLAMUX_LOG_LEVEL", "LLAMUX_LIB_DIR", "LLAMUX_CACHE_DIR", "LLAMUX_PERSONA"].map(envVar),
    notes: 'Run "llamux COMMAND --help" for the options of a command.',
  });
}

export async function helpCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: helpFlags });
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
