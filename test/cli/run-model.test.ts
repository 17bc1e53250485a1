// `run` on stored models: the spec's Modelfile renders exactly its template on the shared chat path,
// one-shot answers stream from a stored model and from piped input, and ps/stop talk to a server.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { tokenizerAddsBos } from "../../src/chat/template.ts";
import { ModelManager } from "../../src/engine/model-manager.ts";
import { renderModelPrompt } from "../../src/generation/model-prompt.ts";
import { ModelStore } from "../../src/store/model-store.ts";
import { specModelfile } from "../fixtures/spec-modelfile.ts";
import { startServer } from "../server/serve-fixture.ts";
import { llamux } from "./cli-fixture.ts";

let dir: string;
let env: Record<string, string>;
let tinyLlama: string;
const manager = new ModelManager();

beforeAll(async () => {
  tinyLlama = await ensureModel("tiny-llama");
  dir = mkdtempSync(join(tmpdir(), "llamux-run-"));
  env = { LLAMUX_MODELS: join(dir, "store") };
  writeFileSync(join(dir, "Modelfile"), specModelfile(tinyLlama) + "SYSTEM You are terse.\n");
  expect((await llamux(["create", "spec", "-f", join(dir, "Modelfile")], env)).exitCode).toBe(0);
});

afterAll(async () => {
  await manager.stopAll();
  rmSync(dir, { recursive: true, force: true });
});

test("a chat with the spec's model renders exactly its TEMPLATE; special text typed by the user stays plain", async () => {
  const model = new ModelStore(env.LLAMUX_MODELS!).resolve("spec")!;
  const engine = await manager.engine({ modelPath: model.modelPath, parallel: 1, contextPerSequence: 512 });
  const user = "Hi <|im_end|> there";
  const prompt = await renderModelPrompt(engine, model, { messages: [{ role: "user", content: user }] });
  const head = "<|startoftext|><|im_start|>system\n";
  const middle = "<|im_end|>\n<|im_start|>user\n";
  const tail = "<|im_end|>\n<|im_start|>assistant\n";
  expect(prompt.text).toBe(`${head}You are terse.${middle}${user}${tail}`);
  // template text is tokenized with special tokens, the system prompt and the user's text as plain text
  const addBos = tokenizerAddsBos(prompt.text, engine.info.bosText);
  const expected = [
    ...(await engine.tokenize(head, { addSpecial: addBos, parseSpecial: true })),
    ...(await engine.tokenize("You are terse.", { addSpecial: false, parseSpecial: false })),
    ...(await engine.tokenize(middle, { addSpecial: false, parseSpecial: true })),
    ...(await engine.tokenize(user, { addSpecial: false, parseSpecial: false })),
    ...(await engine.tokenize(tail, { addSpecial: false, parseSpecial: true })),
  ];
  expect(prompt.tokens).toEqual(expected);
  const allSpecial = await engine.tokenize(prompt.text, { addSpecial: addBos, parseSpecial: true });
  expect(prompt.tokens).not.toEqual(allSpecial);
});

test("run answers one prompt from a stored model, the same twice at temperature 0; stdin is put first", async () => {
  const args = ["run", "spec", "Once upon a time", "-n", "6", "--temperature", "0"];
  const first = await llamux(args, env);
  expect(first.exitCode).toBe(0);
  expect(first.stdout.length).toBeGreaterThan(1);
  expect((await llamux(args, env)).stdout).toBe(first.stdout);
  const piped = await llamux(["run", "spec", "a time", "-n", "6", "--temperature", "0", "--verbose"], env, { stdin: "Once upon" });
  expect(piped.exitCode).toBe(0);
  expect(piped.stdout).toBe(first.stdout);
  expect(piped.stderr).toMatch(/eval count: +6 token\(s\)/);
  expect(piped.stderr).toContain("prompt eval rate:");
  const json = await llamux(["run", tinyLlama, "Give JSON", "-n", "12", "--format", "json"], env);
  expect(json.exitCode).toBe(0);
  expect(json.stdout.trimStart().startsWith("{")).toBe(true);
});

test("a name missing from the store is pulled first; an unknown one fails clearly", async () => {
  const missing = await llamux(["run", "hf.co/nobody/Nothing-GGUF", "hi"], { ...env, HF_ENDPOINT: "http://127.0.0.1:9" });
  expect(missing.exitCode).toBe(1);
  expect(missing.stderr).toContain('Cannot pull "hf.co/nobody/Nothing-GGUF"');
});

test("with a server: run goes through it, ps lists the model, stop unloads it", async () => {
  const server = await startServer(["--profile", "a"], env);
  try {
    const serverEnv = { ...env, LLAMUX_HOST: `127.0.0.1:${server.port}` };
    const answer = await llamux(["run", "spec", "Hello", "-n", "3", "--keepalive", "10m", "--verbose"], serverEnv);
    expect(answer.exitCode).toBe(0);
    expect(answer.stderr).toMatch(/eval count: +3 token\(s\)/);
    const byPath = await llamux(["run", tinyLlama, "Hello", "-n", "2", "--keepalive", "10m"], serverEnv);
    expect(byPath.exitCode).toBe(0);
    const ps = await llamux(["ps"], serverEnv);
    const [header, ...rows] = ps.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^NAME {4,}ID {4,}SIZE {4,}PROCESSOR {4,}CONTEXT {4,}UNTIL$/);
    const specRow = rows.find((row) => row.startsWith("spec:latest"));
    expect(specRow).toBeDefined();
    expect(specRow).toContain(new ModelStore(env.LLAMUX_MODELS!).find("spec")!.id);
    expect(specRow).toMatch(/100% (CPU|GPU) {4,}\d+ {4,}(9|10) minutes from now$/);
    expect((await llamux(["stop", "spec"], serverEnv)).exitCode).toBe(0);
    expect((await llamux(["stop", tinyLlama], serverEnv)).exitCode).toBe(0);
    expect((await llamux(["ps"], serverEnv)).stdout.trimEnd().split("\n")).toHaveLength(1);

    // store commands go through the server too: cp, list (/api/tags), rm
    expect((await llamux(["cp", "spec", "served-copy"], serverEnv)).exitCode).toBe(0);
    const listed = await llamux(["list"], { ...serverEnv, LLAMUX_MODELS: join(dir, "elsewhere") });
    const id = new ModelStore(env.LLAMUX_MODELS!).find("spec")!.id;
    expect(listed.stdout).toMatch(new RegExp(`\\nserved-copy:latest {4,}${id} {4,}`));
    expect(listed.stdout).toMatch(new RegExp(`\\nspec:latest {4,}${id} {4,}`));
    expect((await llamux(["rm", "served-copy"], serverEnv)).stdout).toBe("deleted 'served-copy'\n");
    expect(new ModelStore(env.LLAMUX_MODELS!).find("served-copy")).toBeUndefined();
    const missing = await llamux(["rm", "served-copy"], serverEnv);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("not found");
  } finally {
    await server.stop();
  }
});

test("with a server: create uploads the Modelfile's files to it and creates the model in its store", async () => {
  const serverStore = join(dir, "server-store");
  const server = await startServer(["--profile", "a"], { ...env, LLAMUX_MODELS: serverStore });
  try {
    // The client's own store stays untouched: the files go over HTTP.
    const clientEnv = { LLAMUX_MODELS: join(dir, "client-store"), LLAMUX_HOST: `127.0.0.1:${server.port}` };
    const created = await llamux(["create", "remote-spec", "-f", join(dir, "Modelfile")], clientEnv);
    expect(created.stderr).toContain("uploading");
    expect(created.exitCode).toBe(0);
    const stored = new ModelStore(serverStore).resolve("remote-spec")!;
    expect(stored.system).toBe("You are terse.");
    expect(new ModelStore(clientEnv.LLAMUX_MODELS).list()).toEqual([]);
    // The blob is there now: a second create only checks it.
    const again = await llamux(["create", "remote-spec-2", "-f", join(dir, "Modelfile")], clientEnv);
    expect(again.exitCode).toBe(0);
    expect(again.stderr).not.toContain("uploading");
    const answer = await llamux(["run", "remote-spec-2", "Hello", "-n", "2"], clientEnv);
    expect(answer.exitCode).toBe(0);
  } finally {
    await server.stop();
  }
}, 120_000);

test("stop without a server says so", async () => {
  const result = await llamux(["stop", "spec"], env);
  expect(result.exitCode).toBe(1);
  expect(result.stderr).toContain("no server answers at http://127.0.0.1:9");
});
