#!/usr/bin/env bun
// llamux's command line: picks the sub-command and runs it. Exit codes: 0 ok, 1 runtime error, 2 usage error.
import { findCommand, type Command } from "./cli/commands.ts";
import { topLevelFlags, topLevelHelp } from "./cli/help.ts";
import { isUsageError } from "./usage-error.ts";
import { personaOf, runPersona } from "./persona/persona.ts";

// -h, --help, -v, --version: the flags of the top-level help, so the two cannot differ.
const leadingFlags = new Set(Object.entries(topLevelFlags).flatMap(([name, flag]) => [`--${name}`, `-${flag.short}`]));

/** Runs llamux with its arguments (without the program name). Returns the exit code, or undefined when the
 * command keeps running on its own. Started as `ollama`, `vllm` or `lms`, it speaks that tool's command line
 * (internal commands such as the engine child, started as the same file, stay llamux's). */
export async function main(argv: string[], invokedAs: string = process.argv0): Promise<number | undefined> {
  const persona = personaOf(invokedAs);
  if (persona && !argv[0]?.startsWith("__")) return runPersona(persona, argv, llamuxMain);
  return llamuxMain(argv);
}

async function llamuxMain(argv: string[]): Promise<number | undefined> {
  // Flags before the command belong to llamux itself; everything from the command on belongs to it.
  const commandIndex = argv.findIndex((arg) => !arg.startsWith("-"));
  const leading = commandIndex < 0 ? argv : argv.slice(0, commandIndex);
  const unknownFlag = leading.find((arg) => !leadingFlags.has(arg));
  if (unknownFlag !== undefined) return usageError(`unknown option "${unknownFlag}"`, topLevelHelp());
  if (leading.includes("-h") || leading.includes("--help")) {
    console.log(topLevelHelp());
    return 0;
  }
  if (leading.includes("-v") || leading.includes("--version")) return runCommand("version", []);
  if (argv.length === 0) {
    const { welcomeText } = await import("./cli/welcome.ts");
    console.log(welcomeText());
    return 0;
  }
  if (commandIndex < 0) return usageError("no command given", topLevelHelp());
  return runCommand(argv[commandIndex]!, argv.slice(commandIndex + 1));
}

async function runCommand(name: string, args: string[]): Promise<number | undefined> {
  const entry = findCommand(name);
  if (!entry) return usageError(`unknown command "${name}"`, topLevelHelp());
  let command: Command | undefined;
  try {
    command = await entry.load();
    return await command.run(args);
  } catch (error) {
    if (isUsageError(error)) return usageError((error as Error).message, command?.help ?? topLevelHelp());
    console.error(`error: ${(error as Error).message}`);
    if (process.env.LLAMUX_LOG_LEVEL === "debug" && (error as Error).stack) console.error((error as Error).stack);
    return 1;
  }
}

function usageError(message: string, help: string): number {
  console.error(`error: ${message}\n\n${help}`);
  return 2;
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2));
  if (code !== undefined) process.exit(code);
}
