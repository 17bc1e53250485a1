// `make run`: runs llamux on MODEL (make run MODEL=path/to/model.gguf) or, when none is given, on a
// small generated demo model, and says how to talk to it.
import { ensureModel } from "./gen-models.ts";

const given = process.env.MODEL;
let modelPath = given;
if (!modelPath) {
  modelPath = await ensureModel("tiny-llama", { log: (line) => console.error(line) });
  console.error(`
No MODEL given: using the generated demo model ${modelPath}.
Its weights are random, so it writes nonsense; it exists to show llamux working end to end.
For a real model, download a GGUF file (for example from hf.co/LiquidAI/LFM2-1.2B-GGUF) and run:
  make run MODEL=/path/to/LFM2-1.2B-Q4_K_M.gguf
`);
}

const prompt = process.env.PROMPT ?? "Once upon a time";
console.error(`$ llamux run ${modelPath} "${prompt}" --verbose\n`);
const child = Bun.spawn([process.execPath, "src/main.ts", "run", modelPath, prompt, "--max-tokens", "64", "--verbose"], {
  stdio: ["inherit", "inherit", "inherit"],
});
process.exit(await child.exited);
