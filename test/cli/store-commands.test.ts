// create, list, show, cp, rm, pull and push through the real command line, on a store of the test's own.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { ModelStore } from "../../src/store/model-store.ts";
import { type HubServer, startHubServer } from "../fixtures/hub-server.ts";
import { startRegistryServer } from "../fixtures/registry-server.ts";
import { layerMediaType } from "../../src/store/manifest.ts";
import { lfm2RepairsNeeded } from "../../src/store/lfm2-repair.ts";
import { readGgufHeaderSync } from "../../src/store/gguf.ts";
import { SPEC_TEMPLATE, specModelfile } from "../fixtures/spec-modelfile.ts";
import { llamux } from "./cli-fixture.ts";

let dir: string;
let env: Record<string, string>;
let tinyLlama: string;
let hub: HubServer;

beforeAll(async () => {
  tinyLlama = await ensureModel("tiny-llama");
  dir = mkdtempSync(join(tmpdir(), "llamux-cli-"));
  env = { LLAMUX_MODELS: join(dir, "store") };
  writeFileSync(join(dir, "Modelfile"), specModelfile(tinyLlama) + 'SYSTEM You are terse.\nLICENSE """MIT License\nCopyright\nPermission is granted\n"""\n');
});

afterAll(async () => {
  await hub?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("create from the spec's Modelfile", () => {
  test("stores the template, parameters and system as layers", async () => {
    const created = await llamux(["create", "spec", "-f", join(dir, "Modelfile")], env);
    expect(created.stderr).toContain("success");
    expect(created.exitCode).toBe(0);
    const resolved = new ModelStore(env.LLAMUX_MODELS!).resolve("spec")!;
    expect(resolved.template).toBe(SPEC_TEMPLATE);
    expect(resolved.parameters).toEqual({ temperature: 0.3, top_k: 40, repeat_penalty: 1.05, stop: ["<|im_end|>", "<|endoftext|>"] });
    expect(resolved.system).toBe("You are terse.");
  });

  test("list shows NAME, ID, SIZE and MODIFIED in Ollama's layout", async () => {
    const { stdout, exitCode } = await llamux(["list"], env);
    expect(exitCode).toBe(0);
    const [header, row] = stdout.trimEnd().split("\n");
    expect(header).toMatch(/^NAME {4,}ID {4,}SIZE {4,}MODIFIED$/);
    const id = new ModelStore(env.LLAMUX_MODELS!).find("spec")!.id;
    expect(row).toMatch(new RegExp(`^spec:latest {4,}${id} {4,}\\d+(\\.\\d)? MB {4,}(Less than a second|\\d+ seconds) ago$`));
    expect(header!.indexOf("ID")).toBe(row!.indexOf(id));
    expect((await llamux(["ls"], env)).stdout).toBe(stdout);
  });

  test("show prints the Model, Capabilities, Parameters, System and License sections", async () => {
    const { stdout, exitCode } = await llamux(["show", "spec"], env);
    expect(exitCode).toBe(0);
    expect(stdout).toContain("  Model\n    architecture        llama\n");
    expect(stdout).toMatch(/ {4}quantization {8}F16\n/);
    expect(stdout).toContain("  Capabilities\n    completion\n");
    expect(stdout).toContain('  Parameters\n    repeat_penalty    1.05\n    stop              "<|im_end|>"\n    stop              "<|endoftext|>"\n    temperature       0.3\n    top_k             40\n');
    expect(stdout).toContain("  System\n    You are terse.\n");
    expect(stdout).toContain("  License\n    MIT License\n    Copyright\n    ...\n");
  });

  test("show's single parts", async () => {
    expect((await llamux(["show", "spec", "--template"], env)).stdout).toBe(`${SPEC_TEMPLATE}\n`);
    expect((await llamux(["show", "spec", "--system"], env)).stdout).toBe("You are terse.\n");
    const parameters = (await llamux(["show", "spec", "--parameters"], env)).stdout;
    expect(parameters).toContain(`${"stop".padEnd(30)} "<|im_end|>"\n`);
    expect(parameters).toContain(`${"temperature".padEnd(30)} 0.3\n`);
    const modelfile = (await llamux(["show", "spec", "--modelfile"], env)).stdout;
    expect(modelfile).toContain("# FROM spec:latest");
    expect(modelfile).toContain('TEMPLATE """<|startoftext|>');
    expect(modelfile).toContain("PARAMETER stop <|im_end|>");
    // the printed Modelfile builds the same model again
    writeFileSync(join(dir, "Modelfile.again"), modelfile);
    expect((await llamux(["create", "again", "-f", join(dir, "Modelfile.again")], env)).exitCode).toBe(0);
    expect((await llamux(["show", "again", "--template"], env)).stdout).toBe(`${SPEC_TEMPLATE}\n`);
    expect((await llamux(["rm", "again"], env)).exitCode).toBe(0);
  });

  test("a FROM of a stored model inherits its layers and overrides what the Modelfile sets", async () => {
    writeFileSync(join(dir, "Modelfile.child"), "FROM spec\nPARAMETER temperature 0.9\nSYSTEM Be verbose.\n");
    expect((await llamux(["create", "child", "-f", join(dir, "Modelfile.child")], env)).exitCode).toBe(0);
    const child = new ModelStore(env.LLAMUX_MODELS!).resolve("child")!;
    expect(child.template).toBe(SPEC_TEMPLATE);
    expect(child.system).toBe("Be verbose.");
    expect(child.parameters.temperature).toBe(0.9);
    expect(child.parameters.stop).toEqual(["<|im_end|>", "<|endoftext|>"]);
    expect(child.modelPath).toBe(new ModelStore(env.LLAMUX_MODELS!).resolve("spec")!.modelPath);
  });

  test("a bad Modelfile names its line", async () => {
    writeFileSync(join(dir, "Modelfile.bad"), `FROM ${tinyLlama}\nPARAMETER numa true\n`);
    const result = await llamux(["create", "bad", "-f", join(dir, "Modelfile.bad")], env);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("line 2");
    expect(result.stderr).toContain('unknown parameter "numa"');
  });
});

describe("cp and rm", () => {
  test("cp gives the same id; rm keeps blobs another model uses and removes the rest", async () => {
    expect((await llamux(["cp", "spec", "copy:v1"], env)).exitCode).toBe(0);
    const store = new ModelStore(env.LLAMUX_MODELS!);
    expect(store.find("copy:v1")!.id).toBe(store.find("spec")!.id);
    const blobs = () => readdirSync(join(env.LLAMUX_MODELS!, "blobs")).filter((name) => name.startsWith("sha256-")).sort();
    const before = blobs();
    const removed = await llamux(["rm", "copy:v1"], env);
    expect(removed.stdout).toBe("deleted 'copy:v1'\n");
    expect(blobs()).toEqual(before);
    expect((await llamux(["rm", "child"], env)).exitCode).toBe(0);
    const missing = await llamux(["rm", "nothing"], env);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("model 'nothing' not found");
  });
});

describe("create -q", () => {
  test("quantizes the tiny llama to Q4_0 and the result answers", async () => {
    const created = await llamux(["create", "tiny-q4", "-f", join(dir, "Modelfile"), "-q", "q4_0"], env);
    expect(created.exitCode).toBe(0);
    expect(created.stderr).toContain("quantizing F16 model to Q4_0");
    const store = new ModelStore(env.LLAMUX_MODELS!);
    expect(store.find("tiny-q4")!.size).toBeLessThan(store.find("spec")!.size / 2);
    expect((await llamux(["show", "tiny-q4"], env)).stdout).toMatch(/ {4}quantization {8}Q4_0\n/);
    const answer = await llamux(["run", "tiny-q4", "Hello", "-n", "4", "--temperature", "0"], env);
    expect(answer.exitCode).toBe(0);
    expect(answer.stdout.trim().length).toBeGreaterThan(0);
    const badType = await llamux(["create", "x", "-f", join(dir, "Modelfile"), "-q", "q3_weird"], env);
    expect(badType.exitCode).toBe(1);
    expect(badType.stderr).toContain("unsupported quantization type q3_weird");
  });
});

describe("pull", () => {
  test("pulls from the local hub fixture; list shows it", async () => {
    hub = await startHubServer({ "llamux-test/Tiny-GGUF": { files: [{ path: "Tiny-F16.gguf", content: readFileSync(tinyLlama) }] } });
    const pulled = await llamux(["pull", "hf.co/llamux-test/Tiny-GGUF:F16"], { ...env, HF_ENDPOINT: hub.url });
    expect(pulled.stderr).toContain("pulling manifest");
    expect(pulled.stderr).toContain("success");
    expect(pulled.exitCode).toBe(0);
    expect((await llamux(["list"], env)).stdout).toContain("hf.co/llamux-test/Tiny-GGUF:F16");
    const unknown = await llamux(["pull", "hf.co/llamux-test/Tiny-GGUF:Q9_X"], { ...env, HF_ENDPOINT: hub.url });
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain("F16");
  });
});

describe("pull of a library name", () => {
  test("stores the registry's manifest and layers; run uses its template", async () => {
    const registry = await startRegistryServer([{
      name: "library/tinyreg:latest",
      layers: [
        { mediaType: layerMediaType.model, content: readFileSync(tinyLlama) },
        { mediaType: layerMediaType.template, content: new TextEncoder().encode("{{ .Prompt }} =>") },
        { mediaType: layerMediaType.params, content: new TextEncoder().encode('{"num_predict":3}') },
      ],
    }]);
    try {
      const pulled = await llamux(["pull", "tinyreg"], { ...env, OLLAMA_REGISTRY: registry.url });
      expect(pulled.exitCode).toBe(0);
      expect(pulled.stderr).toContain("success");
      expect((await llamux(["show", "tinyreg", "--template"], env)).stdout).toBe("{{ .Prompt }} =>\n");
      const answer = await llamux(["run", "tinyreg", "Hi", "--temperature", "0", "--verbose"], env);
      expect(answer.exitCode).toBe(0);
      expect(answer.stderr).toMatch(/eval count: +3 token\(s\)/);
    } finally {
      await registry.stop();
    }
  });
});

describe("push", () => {
  test("llamux push and ollama push upload a stored model to a registry named by host (--insecure: http)", async () => {
    const registry = await startRegistryServer([], { tokenRequired: true, signedTokens: true });
    const keyEnv = { ...env, LLAMUX_REGISTRY_KEY: join(dir, "registry-key") };
    try {
      const name = `${registry.host}/alice/spec:v1`;
      expect((await llamux(["cp", "spec", name], env)).exitCode).toBe(0);
      const refused = await llamux(["push", name], keyEnv);
      expect(refused.exitCode).toBe(1);
      expect(registry.manifestOf("alice/spec:v1")).toBeUndefined();

      const pushed = await llamux(["push", name, "--insecure"], keyEnv);
      expect(pushed.exitCode).toBe(0);
      for (const status of ["retrieving manifest", "pushing manifest", "success"]) expect(pushed.stderr).toContain(status);
      expect(pushed.stdout).toContain(`You can find your model at:\n\n\t${name}`);
      const stored = new ModelStore(env.LLAMUX_MODELS!);
      expect(registry.manifestOf("alice/spec:v1")).toBe(new TextDecoder().decode(stored.manifestBytes(name)));
      expect(registry.signers).toHaveLength(1);

      expect((await llamux(["cp", "spec", `${registry.host}/alice/spec:v2`], env)).exitCode).toBe(0);
      const persona = await llamux(["push", `${registry.host}/alice/spec:v2`, "--insecure"], { ...keyEnv, LLAMUX_PERSONA: "ollama" });
      expect(persona.exitCode).toBe(0);
      expect(registry.manifestOf("alice/spec:v2")).toBeDefined();
      const missing = await llamux(["push", `${registry.host}/alice/absent`, "--insecure"], keyEnv);
      expect(missing.exitCode).toBe(1);
      expect(missing.stderr).toContain(`model '${registry.host}/alice/absent' not found`);
    } finally {
      await registry.stop();
    }
  });
});

describe("create's other layers", () => {
  test("an Ollama-named LFM2 file is repaired at create time and answers", async () => {
    const ollamaLfm2 = await ensureModel("tiny-lfm2-ollama");
    expect(lfm2RepairsNeeded(readGgufHeaderSync(ollamaLfm2, { maxArrayLength: 0 })).length).toBeGreaterThan(0);
    writeFileSync(join(dir, "Modelfile.lfm2"), `FROM ${ollamaLfm2}\n`);
    const created = await llamux(["create", "lfm2-ollama", "-f", join(dir, "Modelfile.lfm2")], env);
    expect(created.exitCode).toBe(0);
    expect(created.stderr).toContain("repairing model for llama.cpp");
    const model = new ModelStore(env.LLAMUX_MODELS!).resolve("lfm2-ollama")!;
    expect(lfm2RepairsNeeded(readGgufHeaderSync(model.modelPath, { maxArrayLength: 0 }))).toEqual([]);
    const answer = await llamux(["run", "lfm2-ollama", "Hello", "-n", "3"], env);
    expect(answer.exitCode).toBe(0);
  });

  test("a second FROM adds a projector (vision); ADAPTER adds a LoRA that changes the answer", async () => {
    const projector = await ensureModel("tiny-mmproj");
    const lora = await ensureModel("tiny-llama-lora");
    writeFileSync(join(dir, "Modelfile.vision"), `FROM ${tinyLlama}\nFROM ${projector}\n`);
    expect((await llamux(["create", "vision", "-f", join(dir, "Modelfile.vision")], env)).exitCode).toBe(0);
    const shown = (await llamux(["show", "vision"], env)).stdout;
    expect(shown).toContain("  Projector\n    architecture    clip\n");
    expect(shown).toMatch(/ {2}Capabilities\n {4}completion\n(.*\n)* {4}vision\n/);
    expect(new ModelStore(env.LLAMUX_MODELS!).resolve("vision")!.projectorPath).toBeDefined();

    writeFileSync(join(dir, "Modelfile.lora"), `FROM ${tinyLlama}\nADAPTER ${lora}\n`);
    expect((await llamux(["create", "with-lora", "-f", join(dir, "Modelfile.lora")], env)).exitCode).toBe(0);
    expect(new ModelStore(env.LLAMUX_MODELS!).resolve("with-lora")!.adapterPaths).toHaveLength(1);
    const args = (model: string) => ["run", model, "Once upon a time", "-n", "8", "--temperature", "0"];
    const [base, adapted] = await Promise.all([llamux(args(tinyLlama), env), llamux(args("with-lora"), env)]);
    expect(base.exitCode).toBe(0);
    expect(adapted.exitCode).toBe(0);
    expect(adapted.stdout).not.toBe(base.stdout);

    writeFileSync(join(dir, "Modelfile.notlora"), `FROM ${tinyLlama}\nADAPTER ${projector}\n`);
    const refused = await llamux(["create", "not-lora", "-f", join(dir, "Modelfile.notlora")], env);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain("not a LoRA adapter");
  });
});
