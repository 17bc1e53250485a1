// `make run`: serves MODEL (make run MODEL=path/to/model.gguf) or, when none is given, a small
// generated demo model, on all three profiles, and says how to talk to it.
import { ensureModel } from "./gen-models.ts";

let modelPath = process.env.MODEL;
if (!modelPath) {
  modelPath = await ensureModel("tiny-llama", { log: (line) => console.error(line) });
  console.error(`
No MODEL given: serving the generated demo model ${modelPath}.
Its weights are random, so it writes nonsense; it is there to show llamux working end to end.
For a real model, download a GGUF file (for example from hf.co/LiquidAI/LFM2-1.2B-GGUF) and run:
  make run MODEL=/path/to/LFM2-1.2B-Q4_K_M.gguf`);
}

console.error(`
llamux serves it as "demo" on three profiles:
  Ollama-compatible     http://127.0.0.1:11434
  vLLM-compatible       http://127.0.0.1:8000
  LM Studio-compatible  http://127.0.0.1:1234

Try, in another terminal:
  curl http://127.0.0.1:8000/v1/chat/completions -H 'Content-Type: application/json' \\
    -d '{"model": "demo", "messages": [{"role": "user", "content": "Hello!"}], "max_tokens": 32}'
or point any OpenAI client at http://127.0.0.1:8000/v1 (any API key). Ctrl-C stops the server.
`);
const child = Bun.spawn([process.execPath, "src/main.ts", "serve", modelPath, "--profile", "all", "--served-model-name", "demo"], {
  stdio: ["inherit", "inherit", "inherit"],
});
process.on("SIGINT", () => child.kill("SIGTERM"));
process.exit(await child.exited);
