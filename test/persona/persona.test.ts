// The personalities' own logic, run from the sources: which name picks which personality, lms's table
// and list output, and usage errors that need no server. (test/binary/release.test.ts runs them as
// symlinks of the release executable, with requests.)
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { personaOf } from "../../src/persona/persona.ts";
import { formatLoadedModels, formatModelList, formatSize, type LmsModel } from "../../src/persona/lms-format.ts";

const main = join(import.meta.dir, "..", "..", "src", "main.ts");

async function as(persona: string, args: string[]) {
  const child = Bun.spawn([process.execPath, main, ...args], { env: { ...process.env, LLAMUX_PERSONA: persona }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, exitCode };
}

describe("personaOf", () => {
  test("the program's base name picks the personality", () => {
    expect(personaOf("/usr/local/bin/ollama", {})).toBe("ollama");
    expect(personaOf("./vllm", {})).toBe("vllm");
    expect(personaOf("lms", {})).toBe("lms");
    expect(personaOf("lms.exe", {})).toBe("lms");
    expect(personaOf("/usr/local/bin/llamux", {})).toBeUndefined();
    expect(personaOf("ollama-old", {})).toBeUndefined();
    expect(personaOf(undefined, {})).toBeUndefined();
  });

  test("LLAMUX_PERSONA wins over the name; llamux (or anything else) turns personalities off", () => {
    expect(personaOf("bun", { LLAMUX_PERSONA: "vllm" })).toBe("vllm");
    expect(personaOf("ollama", { LLAMUX_PERSONA: "llamux" })).toBeUndefined();
    expect(personaOf("ollama", { LLAMUX_PERSONA: "" })).toBe("ollama");
  });
});

describe("lms output", () => {
  const models: LmsModel[] = [
    { type: "llm", key: "liquidai/lfm2-1.2b", architecture: "lfm2", params_string: "1.2B", size_bytes: 730_000_000, loaded_instances: [{ id: "liquidai/lfm2-1.2b", config: { context_length: 4096 } }] },
    { type: "llm", key: "org/tiny", architecture: "llama", params_string: "5M", size_bytes: 2_500_000, loaded_instances: [] },
    { type: "embedding", key: "org/bert", architecture: "bert", params_string: "1M", size_bytes: 900_000 },
  ];

  test("sizes in decimal units", () => {
    expect(formatSize(730_000_000)).toBe("730.00 MB");
    expect(formatSize(1_120_000_000)).toBe("1.12 GB");
    expect(formatSize(512)).toBe("512 B");
  });

  test("ls: a summary line, then LLM and EMBEDDING tables with aligned columns", () => {
    const lines = formatModelList(models).split("\n");
    expect(lines[0]).toBe("You have 3 models, taking up 733.40 MB of disk space.");
    expect(lines[2]).toMatch(/^LLM\s+PARAMS\s+ARCH\s+SIZE\s+DEVICE$/);
    const header = lines[2]!;
    const row = lines[3]!;
    expect(row).toStartWith("liquidai/lfm2-1.2b");
    expect(row.indexOf("1.2B")).toBe(header.indexOf("PARAMS"));
    expect(row.indexOf("730.00 MB")).toBe(header.indexOf("SIZE"));
    expect(row).toEndWith("Local    ✓ LOADED");
    expect(lines[4]).toMatch(/^org\/tiny\s+5M\s+llama\s+2\.50 MB\s+Local$/);
    expect(lines[6]).toMatch(/^EMBEDDING\s+PARAMS/);
    expect(formatModelList([])).toContain("lms get");
  });

  test("ps: one block per loaded instance", () => {
    expect(formatLoadedModels(models)).toBe(
      "   LOADED MODELS\n\nIdentifier: liquidai/lfm2-1.2b\n  • Type:  LLM\n  • Size: 730.00 MB\n  • Architecture: lfm2\n  • Context: 4096",
    );
    expect(formatLoadedModels([])).toStartWith("No models are currently loaded.");
  });
});

describe("usage errors that need no server", () => {
  test("lms", async () => {
    const load = await as("lms", ["load"]);
    expect(load.exitCode).toBe(2);
    expect(load.stderr).toContain("name the model to load");
    expect(load.stderr).toContain("Usage: lms load <model>");
    const gpu = await as("lms", ["load", "m", "--gpu", "lots"]);
    expect(gpu.exitCode).toBe(2);
    expect(gpu.stderr).toContain('--gpu must be off, max or a number from 0 to 1, got "lots"');
    const share = await as("lms", ["load", "m", "--gpu", "0.5"]);
    expect(share.exitCode).toBe(2);
    expect(share.stderr).toContain("use --gpu max or --gpu off");
    const port = await as("lms", ["server", "start", "--port", "http"]);
    expect(port.exitCode).toBe(2);
    expect(port.stderr).toContain('--port must be a port number, got "http"');
    const action = await as("lms", ["server", "restart"]);
    expect(action.exitCode).toBe(2);
    expect(action.stderr).toContain("unknown server command 'restart'");
  }, 30_000);

  test("internal commands stay llamux's whatever the name (the engine child is started as the same file)", async () => {
    const engine = await as("ollama", ["__engine", "--help"]);
    expect(engine.exitCode).toBe(0);
    expect(engine.stdout).toStartWith("Usage: llamux __engine");
  }, 30_000);

  test("ollama help COMMAND and vllm serve --help speak the personality's name", async () => {
    const help = await as("ollama", ["help", "serve"]);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toStartWith("Usage: ollama serve");
    const serve = await as("vllm", ["serve", "--help"]);
    expect(serve.stdout).toStartWith("Usage: vllm serve");
  }, 30_000);
});
