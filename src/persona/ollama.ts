// `ollama ...`: Ollama's command line over llamux. `ollama serve` is `llamux serve --profile a`; the
// model commands are llamux's own (which talk to a running server when one answers, as Ollama's do).
import { OLLAMA_COMPATIBLE_VERSION } from "../server/ollama/routes.ts";
import { findCommand } from "../cli/commands.ts";
import type { LlamuxMain } from "./persona.ts";
import { helpAs, wantsHelp } from "./delegate.ts";

interface OllamaCommand {
  summary: string;
  /** llamux's command line for it, before the user's arguments */
  llamux: string[];
  hidden?: boolean;
}

const commands: Record<string, OllamaCommand> = {
  serve: { summary: "Start ollama", llamux: ["serve", "--profile", "a"] },
  start: { summary: "Start ollama", llamux: ["serve", "--profile", "a"], hidden: true },
  create: { summary: "Create a model", llamux: ["create"] },
  show: { summary: "Show information for a model", llamux: ["show"] },
  run: { summary: "Run a model", llamux: ["run"] },
  stop: { summary: "Stop a running model", llamux: ["stop"] },
  pull: { summary: "Pull a model from a registry", llamux: ["pull"] },
  push: { summary: "Push a model to a registry", llamux: ["push"] },
  list: { summary: "List models", llamux: ["list"] },
  ls: { summary: "List models", llamux: ["list"], hidden: true },
  ps: { summary: "List running models", llamux: ["ps"] },
  cp: { summary: "Copy a model", llamux: ["cp"] },
  rm: { summary: "Remove a model", llamux: ["rm"] },
};

export function ollamaHelp(): string {
  const visible = Object.entries(commands).filter(([, command]) => !command.hidden);
  const list = visible.map(([name, command]) => `  ${name.padEnd(11)} ${command.summary}`).join("\n");
  return `Large language model runner (llamux, speaking Ollama's command line)

Usage:
  ollama [flags]
  ollama [command]

Available Commands:
${list}
  help        Help about any command

Flags:
  -h, --help      help for ollama
  -v, --version   Show version information

Use "ollama [command] --help" for more information about a command.`;
}

function unknown(what: string): number {
  console.error(`Error: ${what}\nRun 'ollama --help' for usage.`);
  return 1;
}

export async function ollamaMain(argv: string[], llamux: LlamuxMain): Promise<number | undefined> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "-h" || first === "--help" || (first === "help" && rest.length === 0)) {
    console.log(ollamaHelp());
    return 0;
  }
  if (first === "-v" || first === "--version") {
    // Scripts parse this line; the number is the Ollama release whose API profile a follows.
    console.log(`ollama version is ${OLLAMA_COMPATIBLE_VERSION}`);
    return 0;
  }
  if (first === "help") return ollamaMain([rest[0]!, "--help"], llamux);
  if (first.startsWith("-")) return unknown(`unknown flag: ${first}`);
  const command = Object.hasOwn(commands, first) ? commands[first] : undefined;
  if (!command) return unknown(`unknown command "${first}" for "ollama"`);
  const [llamuxCommand] = command.llamux;
  if (!findCommand(llamuxCommand!)) {
    console.error(`Error: "ollama ${first}" is not available in this llamux build (no "llamux ${llamuxCommand}" command)`);
    return 1;
  }
  if (wantsHelp(rest)) {
    // Aliases (ls, start) show the help under the command's own name, as Ollama's do.
    console.log(await helpAs(llamuxCommand!, "ollama", llamuxCommand!));
    return 0;
  }
  return llamux([...command.llamux, ...rest]);
}
