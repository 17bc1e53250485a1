// Personalities by name: the executable invoked as `ollama`, `vllm` or `lms` (a symlink or a copy)
// speaks that tool's command line, mapped onto llamux's own commands and profiles a, b and c.
// LLAMUX_PERSONA=ollama|vllm|lms picks one without renaming (tests, `bun src/main.ts`); llamux turns it off.
import { basename } from "node:path";

export type PersonaName = "ollama" | "vllm" | "lms";

const personaNames: readonly PersonaName[] = ["ollama", "vllm", "lms"];

/** The personality for the name the program was started as, e.g. `/usr/local/bin/ollama` or `./lms`. */
export function personaOf(invokedAs: string | undefined, env: NodeJS.ProcessEnv = process.env): PersonaName | undefined {
  const forced = env.LLAMUX_PERSONA;
  if (forced !== undefined && forced !== "") return personaNames.find((name) => name === forced);
  const name = basename(invokedAs ?? "").replace(/\.exe$/, "");
  return personaNames.find((persona) => persona === name);
}

/** Runs llamux's own command line (main.ts without the personality check). */
export type LlamuxMain = (argv: string[]) => Promise<number | undefined>;

export async function runPersona(persona: PersonaName, argv: string[], llamux: LlamuxMain): Promise<number | undefined> {
  switch (persona) {
    case "ollama":
      return (await import("./ollama.ts")).ollamaMain(argv, llamux);
    case "vllm":
      return (await import("./vllm.ts")).vllmMain(argv, llamux);
    case "lms":
      return (await import("./lms.ts")).lmsMain(argv);
  }
}
