// The manual's examples (README.md and docs/), run as a reader would copy them: every fenced sh, ts and js
// block runs here against generated models, its output checked for shape, unless its marker names why it
// cannot (test/docs/doc-examples.ts defines the markers). Whatever the marker, the commands, flags and
// make targets a shell example names must exist, so renaming a flag breaks this test.
//
// How an example is adapted, and nothing more: the three profiles' ports (11434, 8000, 1234) become the
// ports of the test's servers, model names of the examples (the ones in MODEL_NAMES) become generated
// models, `new LMStudioClient()` (which looks on port 41343) is given the test's profile-c address, the MCP
// server `npx -y @modelcontextprotocol/server-everything` (fetched from npm) is the same server installed
// here, a speech is held to 64 frames (`max_frames`: a voice with random weights never ends by itself), and
// commands run with a home, a model store and a state directory of their own. One shared server per
// profile serves every example of it; they run in page order, one at a time.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel, type ModelName } from "../../scripts/gen-models.ts";
import { commands, findCommand } from "../../src/cli/commands.ts";
import { topLevelFlags } from "../../src/cli/help.ts";
import type { Flags } from "../../src/cli/help-layout.ts";
import { serveFlags } from "../../src/cli/serve.ts";
import { everythingEntry } from "../fixtures/mcp-servers.ts";
import { freePort, startServer, type RunningServer } from "../server/serve-fixture.ts";
import { examplesOf, inlineCommands, isShell, manualPages, ROOT, shellCommands, type Example } from "./doc-examples.ts";

const examples = manualPages().flatMap(examplesOf);
const where = (example: Pick<Example, "file" | "line">) => `${example.file}:${example.line}`;

describe("the manual's examples", () => {
  test("are found, and each marker is readable and skips only for a known reason", () => {
    expect(examples.length).toBeGreaterThan(20);
    const problems = examples.filter((example) => example.problem).map((example) => `${where(example)}: ${example.problem}`);
    expect(problems).toEqual([]);
  });

  test("name only commands, flags and make targets that exist", async () => {
    const makefile = readFileSync(join(ROOT, "Makefile"), "utf8");
    const problems: string[] = [];
    const quoted = manualPages().flatMap(inlineCommands).map((command) => ({ ...command, language: "sh" }));
    for (const example of [...examples.filter(isShell), ...quoted]) {
      for (const words of shellCommands(example.code)) {
        const [program, ...rest] = words[0] === "sudo" ? words.slice(1) : words;
        if (program === "make") {
          for (const target of rest.filter((word) => !word.includes("="))) if (!new RegExp(`^${target}:`, "m").test(makefile)) problems.push(`${where(example)}: make ${target}: no such target`);
          continue;
        }
        const flags = await flagsOf(program!, rest);
        if (flags === undefined) continue;
        if (flags === null) {
          problems.push(`${where(example)}: ${words.join(" ")}: no such command`);
          continue;
        }
        for (const word of rest) {
          if (word === "--") break;
          const long = /^--([a-z][a-z0-9-]*)/.exec(word)?.[1];
          const short = /^-([a-zA-Z])$/.exec(word)?.[1];
          const known = long ? long in flags : short ? Object.values(flags).some((flag) => flag.short === short) : true;
          if (!known) problems.push(`${where(example)}: ${program} ${rest[0]}: no flag ${word}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

/** The flags of what a shell command runs: undefined when it is not llamux's, null when llamux has no such command. */
async function flagsOf(program: string, rest: string[]): Promise<Flags | null | undefined> {
  const command = rest[0];
  if (program === "vllm") return command === "serve" ? serveFlags : undefined;
  if (program !== "llamux" && program !== "ollama") return undefined;
  if (command === undefined || command.startsWith("-")) return topLevelFlags;
  if (/^[A-Z]+$/.test(command)) return undefined; // a placeholder: llamux COMMAND --help
  const entry = findCommand(command);
  if (!entry) return program === "ollama" ? undefined : null;
  const page = (await entry.load()).page;
  return page?.flags ?? (commands[command] ? {} : null);
}

// ---- running them ----

/** The example's model names and the generated models standing in for them. */
const MODEL_NAMES: Array<[name: string, model: () => string]> = [];
let work: string;
let bin: string;
const servers: Partial<Record<"a" | "b" | "c", RunningServer>> = {};

/** A folder with a model and its projector beside it (mmproj-NAME.gguf), as a user keeps a vision, audio or speech model. */
async function modelFolder(name: string, backbone: ModelName, projector: ModelName): Promise<string> {
  const dir = join(work, "models", name);
  mkdirSync(dir, { recursive: true });
  symlinkSync(await ensureModel(backbone), join(dir, `${name}.gguf`));
  symlinkSync(await ensureModel(projector), join(dir, `mmproj-${name}.gguf`));
  return join(dir, `${name}.gguf`);
}

/** A 16 kHz 16-bit mono WAV of a tone. */
function toneWav(seconds: number): Uint8Array {
  const rate = 16_000;
  const samples = rate * seconds;
  const bytes = new Uint8Array(44 + samples * 2);
  const view = new DataView(bytes.buffer);
  const ascii = (offset: number, text: string) => [...text].forEach((c, i) => view.setUint8(offset + i, c.charCodeAt(0)));
  ascii(0, "RIFF"); view.setUint32(4, 36 + samples * 2, true); ascii(8, "WAVE"); ascii(12, "fmt ");
  view.setUint32(16, 16, true); view.setUint16(20, 1, true); view.setUint16(22, 1, true); view.setUint32(24, rate, true);
  view.setUint32(28, rate * 2, true); view.setUint16(32, 2, true); view.setUint16(34, 16, true); ascii(36, "data"); view.setUint32(40, samples * 2, true);
  for (let i = 0; i < samples; i++) view.setInt16(44 + i * 2, Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), true);
  return bytes;
}

function baseEnv(): Record<string, string> {
  return {
    PATH: `${bin}:${process.env.PATH}`, HOME: join(work, "home"), LLAMUX_MODELS: join(work, "store"), LLAMUX_STATE_DIR: join(work, "state"),
    LLAMUX_CACHE_DIR: join(work, "cache"), LLAMUX_LOG_LEVEL: "warn", XDG_CONFIG_HOME: join(work, "config"),
  };
}

interface Ports { a: number; b: number; c: number }
const PROFILE_PORTS = { a: 11434, b: 8000, c: 1234 } as const;

/** The example with the test's ports and models. */
function adapt(code: string, ports: Ports): string {
  let text = code;
  for (const profile of ["a", "b", "c"] as const) {
    const port = PROFILE_PORTS[profile];
    text = text.replace(new RegExp(`(127\\.0\\.0\\.1|localhost):${port}\\b`, "g"), `127.0.0.1:${ports[profile]}`).replace(new RegExp(`--port ${port}\\b`, "g"), `--port ${ports[profile]}`);
  }
  text = text.replace(/new LMStudioClient\(\)/g, `new LMStudioClient({ baseUrl: "ws://127.0.0.1:${ports.c}" })`);
  if (/audio[/.]speech/.test(text)) text = text.replace(/"input": "/g, `"max_frames": 64, "input": "`).replace(/\binput: "/g, `max_frames: 64, input: "`);
  text = text.replace(/\{ command: "npx", args: \["-y", "@modelcontextprotocol\/server-everything"\] \}/g, JSON.stringify(everythingEntry()));
  for (const [name, model] of MODEL_NAMES) {
    const escaped = name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    text = text.replace(new RegExp(`(?<=^|[\\s"'=@(])${escaped}(?=$|[\\s"',)])`, "gm"), model());
  }
  return text;
}

const PRELUDES: Record<string, string> = {
  ollama: `import { Ollama } from "ollama";\nconst ollama = new Ollama({ host: "http://127.0.0.1:11434" });`,
  openai: `import OpenAI from "openai";\nconst openai = new OpenAI({ baseURL: "http://127.0.0.1:8000/v1", apiKey: "unused" });\nconst client = openai;\nconst model = "LiquidAI/LFM2-1.2B";`,
  model: `const model = "MODEL.gguf";`,
  runner: `import { Chunk, McpToolResult, ModelRunner } from "llamux";\nawait using runner = await ModelRunner.load("MODEL.gguf", { contextSize: 1024 });`,
};

interface Outcome { stdout: string; stderr: string; exitCode: number }

async function runProcess(argv: string[], env: Record<string, string>, timeoutMs = 180_000): Promise<Outcome> {
  // setsid: its own process group, so whatever the example leaves running is stopped with it
  const child = Bun.spawn(["setsid", ...argv], { cwd: join(work, "cwd"), env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const timer = setTimeout(() => killGroup(child.pid), timeoutMs);
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  clearTimeout(timer);
  killGroup(child.pid);
  return { stdout, stderr, exitCode };
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGTERM");
  } catch {
    // the group has ended
  }
}

/** JSON values, NDJSON lines or SSE data lines, one after another, as curl prints them. */
function jsonValues(text: string): unknown[] {
  const values: unknown[] = [];
  const data = text.split("\n").map((line) => line.replace(/^data: /, "")).filter((line) => line !== "[DONE]" && !line.startsWith("event: ") && !line.startsWith(":")).join("\n");
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < data.length; i++) {
    const c = data[i]!;
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{" || c === "[") {
      if (depth++ === 0) start = i;
    } else if ((c === "}" || c === "]") && --depth === 0) values.push(JSON.parse(data.slice(start, i + 1)));
  }
  return values;
}

/** What every run example must show: success, no error in the output, JSON that parses, the expected text. */
function expectShape(example: Example, outcome: Outcome): void {
  const context = `${where(example)}\n--- stdout\n${outcome.stdout.slice(-2000)}\n--- stderr\n${outcome.stderr.slice(-2000)}`;
  expect({ exitCode: outcome.exitCode, context }).toEqual({ exitCode: 0, context });
  expect(outcome.stderr).not.toMatch(/^error|\berror:|Error:/m);
  // curl's output: JSON, NDJSON or SSE, none of it an error (a program prints what it likes)
  if (isShell(example) && /^\s*[[{]|^data: /m.test(outcome.stdout)) {
    const values = jsonValues(outcome.stdout);
    expect(values.length).toBeGreaterThan(0);
    for (const value of values) if (value && typeof value === "object" && !Array.isArray(value)) expect({ where: where(example), error: (value as { error?: unknown }).error ?? null }).toEqual({ where: where(example), error: null });
  }
  for (const text of example.expects) expect(`${outcome.stdout}${outcome.stderr}`).toContain(text);
}

async function runShell(example: Example, ports: Ports, env: Record<string, string>): Promise<Outcome> {
  const outcome = await runProcess(["bash", "-eo", "pipefail", "-c", adapt(example.code, ports)], env);
  // curl -o FILE writes an error answer into the file, and exits 0: read what it wrote.
  for (const [, file] of example.code.matchAll(/ -o (\S+)/g)) {
    const path = join(work, "cwd", file!);
    const head = existsSync(path) ? readFileSync(path).subarray(0, 200).toString() : "(missing)";
    outcome.stdout += /^\{"error"|^\(missing\)/.test(head) ? `\n${file}: ${head}` : "";
    if (/^\{"error"|^\(missing\)/.test(head)) outcome.exitCode ||= 1;
  }
  return outcome;
}

async function waitForPort(port: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      await Bun.sleep(200);
    }
  }
  throw new Error(`nothing answered on port ${port} within ${timeoutMs / 1000} s`);
}

/** The status a probe settles on: 200 once the server is ready, else the last one within the time. */
async function readyStatus(url: string, timeoutMs = 120_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = (await fetch(url)).status;
    if (status === 200 || Date.now() > deadline) return status;
    await Bun.sleep(250);
  }
}

describe("run", () => {
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "llamux-doc-examples-"));
    const chat = await ensureModel("tiny-lfm2");
    const vision = await modelFolder("vision", "tiny-llama", "tiny-mmproj");
    const audio = await modelFolder("audio", "tiny-llama", "tiny-audio-mmproj");
    const tts = await modelFolder("tts", "tiny-qwen3tts", "tiny-qwen3tts-mmproj");
    writeFileSync(join(work, "models", "tts", "narrator.wav"), toneWav(1)); // the voice the speech example names
    const reranker = await ensureModel("tiny-bert-rerank");
    for (const name of ["/models/LFM2-1.2B-Q4_K_M.gguf", "./model.gguf", "MODEL.gguf", "MODEL", "qwen3:8b", "qwen3"]) MODEL_NAMES.push([name, () => chat]);
    MODEL_NAMES.push(["vision.gguf", () => vision], ["audio.gguf", () => audio], ["tts.gguf", () => tts], ["bge-reranker.gguf", () => reranker]);

    // The programs the examples call: llamux and its personalities, from this checkout.
    bin = join(work, "bin");
    mkdirSync(bin);
    for (const [name, persona] of [["llamux", "llamux"], ["ollama", "ollama"], ["vllm", "vllm"], ["lms", "lms"]]) {
      writeFileSync(join(bin, name!), `#!/bin/sh\nLLAMUX_PERSONA=${persona} exec ${process.execPath} ${join(ROOT, "src", "main.ts")} "$@"\n`, { mode: 0o755 });
    }
    // Files the examples read from their working directory.
    const cwd = join(work, "cwd");
    mkdirSync(cwd);
    copyFileSync(join(ROOT, "test", "fixtures", "images", "python-16.jpg"), join(cwd, "photo.jpg"));
    writeFileSync(join(cwd, "speech.wav"), toneWav(1));
    writeFileSync(join(cwd, "Modelfile"), `FROM ${chat}\nSYSTEM """Answer in one line."""\nPARAMETER temperature 0.7\n`);
    const mcpConfig = join(work, "mcp.json");
    writeFileSync(mcpConfig, JSON.stringify({ mcpServers: { everything: everythingEntry() } }));

    const serverEnv = { ...baseEnv(), XDG_CONFIG_HOME: join(work, "server-config") };
    const common = ["--mcp-config", mcpConfig];
    [servers.a, servers.b, servers.c] = await Promise.all([
      startServer(["--profile", "a", ...common, "--ctx-size", "512"], serverEnv),
      // 1024: a clip's 750 audio tokens must fit, and profile b's context does not grow
      startServer([chat, "--profile", "b", "--served-model-name", "LiquidAI/LFM2-1.2B", ...common, "--ctx-size", "1024"], serverEnv),
      startServer([chat, "--profile", "c", ...common, "--ctx-size", "512"], serverEnv),
    ]);
  }, 600_000);

  afterAll(async () => {
    await Promise.all(Object.values(servers).map((server) => server?.stop()));
    if (work) rmSync(work, { recursive: true, force: true });
  });

  for (const example of examples) {
    const kind = example.kind;
    if (kind.kind === "skip") continue;
    test(`${where(example)} (${example.language}${kind.kind === "client" ? "" : `, ${kind.kind}`})`, async () => {
      const shared: Ports = { a: servers.a!.port, b: servers.b!.port, c: servers.c!.port };
      const env = { ...baseEnv(), OLLAMA_HOST: `127.0.0.1:${shared.a}` };
      if (kind.kind === "own-server") {
        // Ports of its own: the profiles' defaults, OLLAMA_HOST and lms's last port all lead there.
        const own: Ports = { a: await freePort(), b: await freePort(), c: await freePort() };
        const state = join(work, `state-${example.line}`);
        mkdirSync(state, { recursive: true });
        writeFileSync(join(state, "lms-last-port"), String(own.c));
        const ownEnv = { ...env, OLLAMA_HOST: `127.0.0.1:${own.a}`, LLAMUX_STATE_DIR: state, XDG_CONFIG_HOME: join(work, "server-config") };
        if (kind.profile) {
          // It leaves its server running: wait until that answers, then stop the block's process group.
          const child = Bun.spawn(["setsid", "bash", "-eo", "pipefail", "-c", `${adapt(example.code, own)}\nwait`], { cwd: join(work, "cwd"), env: ownEnv, stdout: "pipe", stderr: "pipe" });
          try {
            await waitForPort(own[kind.profile]);
            // profile b answers /health with 503 until its model has loaded, as vLLM does
            expect(await readyStatus(`http://127.0.0.1:${own[kind.profile]}/${kind.profile === "b" ? "health" : ""}`)).toBe(200);
          } finally {
            killGroup(child.pid);
            await child.exited;
          }
          return;
        }
        expectShape(example, await runShell(example, own, ownEnv));
        return;
      }
      if (isShell(example)) {
        expectShape(example, await runShell(example, shared, env));
        return;
      }
      const preludes = kind.kind === "with" ? kind.preludes.map((name) => PRELUDES[name] ?? `throw new Error("no prelude ${name}")`) : [];
      const dir = join(ROOT, "test-artifacts", "doc-examples");
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `${example.file.replaceAll("/", "-")}-${example.line}.ts`);
      writeFileSync(file, adapt([...preludes, example.code].join("\n"), shared));
      expectShape(example, await runProcess([process.execPath, file], env));
    }, 240_000);
  }

  test("the shared servers served every example without a crash", () => {
    for (const server of Object.values(servers)) expect(server!.stderr()).not.toMatch(/panic|Segmentation|SIGSEGV|SIGABRT|stopped \(killed/);
  });
});

