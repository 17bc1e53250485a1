// `llamux doctor`: what llamux finds on this machine, for bug reports and first set-up: the native
// library variant, CPU features, GPUs, the model store and its free space, and the profiles' ports.
import { existsSync, readFileSync, statfsSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, freemem, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { libraryDir } from "../../ffi/library-dir.ts";
import { physicalCoreCount } from "../../ffi/hardware.ts";
import { profiles } from "../server/profiles/index.ts";
import { ModelStore, storeRoot } from "../store/model-store.ts";
import { llamaCppCommit, llamaCppRelease, llamuxVersion } from "./version.ts";
import { UsageError } from "../usage-error.ts";
import { voicesDir } from "../config.ts";
import { listVoices } from "../audio/voices.ts";
import { SPEECH_FORMATS } from "../audio/speech/speech-encoder.ts";
import { helpFlag, renderHelp, type HelpPage } from "./help-layout.ts";

export const doctorPage: HelpPage = {
  usage: ["llamux doctor"],
  description: `Reports what llamux finds on this machine: its version and native library variant, the CPU and its
features, GPUs llama.cpp can use, memory, the model store with its free space, speech output (its formats
and the voices in LLAMUX_VOICES), and whether the ports of the three profiles (11434, 8000, 1234) are
free. Exits 1 when something would stop llamux from working.`,
  flags: helpFlag,
};

export const doctorHelp = renderHelp(doctorPage);

const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`;

/** Whether nothing listens on host:port now (by trying to listen there). */
function portIsFree(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

interface Finding {
  label: string;
  value: string;
  /** Something that stops llamux from working here. */
  problem?: boolean;
}

function libraryFindings(): Finding[] {
  const dir = libraryDir();
  const variantFile = join(dir, "VARIANT");
  const variant = existsSync(variantFile) ? readFileSync(variantFile, "utf8").trim() : undefined;
  return [{ label: "native libraries", value: `${variant ?? "variant unknown"} in ${dir}`, problem: !existsSync(dir) }];
}

async function engineFindings(): Promise<Finding[]> {
  try {
    const { loadNative, backendDevices, cpuBackendNote } = await import("../../ffi/native.ts");
    const features = String(loadNative().llama.llama_print_system_info()).trim().replace(/\s*\|$/, "");
    const gpus = backendDevices().filter((d) => d.type === "gpu" || d.type === "igpu");
    return [
      { label: "CPU features", value: features },
      ...(cpuBackendNote() ? [{ label: "CPU back end", value: cpuBackendNote()! }] : []),
      {
        label: "GPU",
        value: gpus.length === 0 ? "none found: models run on the CPU" : gpus.map((g) => `${g.name} (${g.description}, ${gib(g.freeBytes)} free of ${gib(g.totalBytes)})`).join("; "),
      },
    ];
  } catch (error) {
    return [{ label: "llama.cpp", value: `cannot load: ${(error as Error).message}`, problem: true }];
  }
}

function storeFindings(): Finding[] {
  const root = storeRoot();
  const probe = existsSync(root) ? root : join(root, "..");
  const present = existsSync(probe) ? probe : "/";
  const fs = statfsSync(present);
  const count = new ModelStore(root).list().length;
  const models = count === 0 ? "no models yet" : `${count} model${count === 1 ? "" : "s"}`;
  return [
    { label: "model store", value: `${root}: ${models}` },
    { label: "free space", value: `${gib(fs.bavail * fs.bsize)} on the store's file system` },
  ];
}

/** Speech output: what a text-to-speech model can answer in, and the named voices found. */
async function speechFindings(): Promise<Finding[]> {
  const folder = voicesDir();
  const voices = [...(await listVoices([folder])).keys()];
  return [
    { label: "speech", value: `text-to-speech models (Qwen3-TTS, Pocket TTS projectors) on /v1/audio/speech and \`run --output\`; formats ${SPEECH_FORMATS.join(", ")}; speed 0.25 to 4` },
    { label: "voices", value: `${folder}: ${voices.length === 0 ? "no speaker files" : voices.join(", ")}` },
  ];
}

async function portFindings(): Promise<Finding[]> {
  return Promise.all(Object.values(profiles).map(async (profile) => {
    const free = await portIsFree(profile.defaultPort);
    return { label: `port ${profile.defaultPort}`, value: `${free ? "free" : "in use"} (profile ${profile.name}, ${profile.anchor})` };
  }));
}

export async function doctorCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: helpFlag });
  if (values.help) {
    console.log(doctorHelp);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  const findings: Finding[] = [
    { label: "llamux", value: `${llamuxVersion} (llama.cpp ${llamaCppRelease}, commit ${llamaCppCommit.slice(0, 7)})` },
    ...libraryFindings(),
    { label: "CPU", value: `${cpu}, ${physicalCoreCount()} physical cores (decode threads: up to that many, fewer while other work holds cores)` },
    ...(await engineFindings()),
    { label: "memory", value: `${gib(freemem())} free of ${gib(totalmem())}` },
    ...storeFindings(),
    ...(await speechFindings()),
    ...(await portFindings()),
  ];
  const width = Math.max(...findings.map((f) => f.label.length));
  for (const f of findings) console.log(`${f.problem ? "!" : " "} ${f.label.padEnd(width)}  ${f.value}`);
  return findings.some((f) => f.problem) ? 1 : 0;
}
