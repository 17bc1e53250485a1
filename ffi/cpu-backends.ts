// Which ggml CPU variants may load. The prebuilt libraries ship one CPU back end per x86 generation and
// ggml picks the best one the processor supports. On processors with Intel AMX that is the
// `sapphirerapids` variant, whose AMX matrix kernels are unsafe in the pinned llama.cpp:
//
// - they do not broadcast a 2-D weight over a 3-D input (amx/mmq.cpp offsets the weight by the input's
//   batch index), and hybrid models such as LFM2 multiply [embedding, tokens, sequences] inputs in their
//   short-convolution blocks: with two or more sequences in one micro-batch, every sequence but the
//   first reads past the weight. Measured here: wrong logits on the tiny LFM2 (greedy tokens differ
//   from the same prompt decoded alone), SIGSEGV on the LFM2-350M shape with Q4_0 weights;
// - llama.cpp's own tools built natively with AMX crash in the same kernel (llama-bench -p 512 on a
//   dense 1B llama, Q4_0), as users of Ollama report on Sapphire Rapids machines.
//
// llamux therefore loads the back ends from a directory without the AMX variant on such processors
// (ggml then picks the best AVX-512 one, whose weight repacking is correct and fast) unless
// LLAMUX_CPU_AMX=1 asks for AMX; the scheduler then keeps hybrid sequences out of shared micro-batches.
import { existsSync, readdirSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cpuFlags } from "./hardware.ts";
import { linkedDirectory } from "./linked-dir.ts";

export const AMX_CPU_VARIANT = "libggml-cpu-sapphirerapids.so";
const NO_AMX_DIR = "backends-no-amx";

export interface BackendChoice {
  /** Where ggml_backend_load_all_from_path looks for back ends. */
  dir: string;
  /** True when the AMX kernels are in use (the AMX variant loads on a processor with AMX). */
  amxKernels: boolean;
  /** A line for the debug log / doctor explaining the choice, when there was one to make. */
  note?: string;
}

export interface BackendChoiceInputs {
  libDir: string;
  cpuFlags: ReadonlySet<string>;
  amxRequested: boolean;
  platform: NodeJS.Platform;
}

/** The back-end directory for this machine; creates the AMX-free directory of links when needed. */
export function chooseCpuBackends(inputs: BackendChoiceInputs): BackendChoice {
  const { libDir, cpuFlags, amxRequested, platform } = inputs;
  const processorHasAmx = cpuFlags.has("amx_int8") || cpuFlags.has("amx_tile");
  if (platform !== "linux" || !processorHasAmx || !existsSync(join(libDir, AMX_CPU_VARIANT))) {
    // A natively built libggml-cpu.so is compiled without AMX by scripts/build-llama-from-source.sh.
    return { dir: libDir, amxKernels: false };
  }
  if (amxRequested) {
    return { dir: libDir, amxKernels: true, note: "Intel AMX kernels enabled (LLAMUX_CPU_AMX=1): hybrid models decode one sequence per batch" };
  }
  return {
    dir: linkDirWithout(libDir, AMX_CPU_VARIANT),
    amxKernels: false,
    note: "Intel AMX found: using the AVX-512 CPU back end, since llama.cpp's AMX kernels crash or compute wrong results on some shapes (LLAMUX_CPU_AMX=1 overrides)",
  };
}

/** The choice for a library directory on the machine this process runs on. */
export function cpuBackendsFor(libDir: string): BackendChoice {
  return chooseCpuBackends({
    libDir,
    cpuFlags: cpuFlags(),
    amxRequested: process.env.LLAMUX_CPU_AMX === "1",
    platform: process.platform,
  });
}

/**
 * A directory of links to every ggml library in `libDir` but `excluded`, made once and shared: inside the
 * library directory when it is writable, else in the temporary directory. Built under a temporary name
 * and renamed into place, so processes starting together never see a half-made one.
 */
function linkDirWithout(libDir: string, excluded: string): string {
  const candidates = [
    join(libDir, NO_AMX_DIR),
    join(tmpdir(), `llamux-${NO_AMX_DIR}-${createHash("sha256").update(libDir).digest("hex").slice(0, 12)}`),
  ];
  const wanted = readdirSync(libDir).filter((name) => name.startsWith("libggml") && name !== excluded);
  // Inside the library directory the links are relative, so the directory can move (an image's root
  // filesystem is assembled in one place and used in another).
  const dir = linkedDirectory(candidates, wanted, (name, dir) => (dir === candidates[0] ? join("..", name) : join(libDir, name)));
  if (dir) return dir;
  throw new Error(`Cannot prepare the CPU back ends without AMX in ${candidates.join(" or ")}: set LLAMUX_CPU_AMX=1 to load them as they are`);
}
