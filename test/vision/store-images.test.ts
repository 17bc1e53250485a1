// A stored vision model: `llamux create` from a Modelfile with a second FROM naming the projector and a
// Go TEMPLATE, then `llamux show` and a server's /api/show list vision, and /api/chat takes an image
// through the Go template path.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Ollama } from "ollama";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { llamux } from "../cli/cli-fixture.ts";
import { startServer, type RunningServer } from "../server/serve-fixture.ts";

const IMAGE_TOKENS = 16;
const TEMPLATE = "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n";
let dir: string;
let env: Record<string, string>;
let server: RunningServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "llamux-vision-store-"));
  env = { LLAMUX_MODELS: join(dir, "store") };
  writeFileSync(join(dir, "Modelfile"), `FROM ${await ensureModel("tiny-llama")}\nFROM ${await ensureModel("tiny-mmproj")}\nTEMPLATE """${TEMPLATE}"""\n`);
  const created = await llamux(["create", "seeing", "-f", join(dir, "Modelfile")], env);
  if (created.exitCode !== 0) throw new Error(`create failed: ${created.stderr}`);
  server = await startServer(["--profile", "a", "--ctx-size", "512", "--threads", "2", "--parallel", "1"], env);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("llamux show and /api/show list the vision capability of a model created with a projector", async () => {
  const shown = await llamux(["show", "seeing"], env);
  expect(shown.exitCode).toBe(0);
  expect(shown.stdout).toMatch(/Capabilities[\s\S]*vision/);
  const show = (await new Ollama({ host: server.baseUrl }).show({ model: "seeing" })) as unknown as { capabilities: string[] };
  expect(show.capabilities).toContain("vision");
});

test("/api/chat on the stored model: the image goes through its Go TEMPLATE and counts", async () => {
  const ollama = new Ollama({ host: server.baseUrl });
  const jpeg = new Uint8Array(await Bun.file(join(import.meta.dir, "..", "fixtures", "images", "python-16.jpg")).arrayBuffer());
  const ask = (images?: Uint8Array[]) =>
    ollama.chat({ model: "seeing", messages: [{ role: "user", content: "What is it?", ...(images ? { images } : {}) }], stream: false, options: { num_predict: 3, temperature: 0 } });
  const plain = await ask();
  const shown = await ask([jpeg]);
  expect(shown.eval_count).toBe(3);
  expect(shown.prompt_eval_count - plain.prompt_eval_count).toBeGreaterThanOrEqual(IMAGE_TOKENS);
  expect(shown.prompt_eval_count - plain.prompt_eval_count).toBeLessThanOrEqual(IMAGE_TOKENS + 2);
});
