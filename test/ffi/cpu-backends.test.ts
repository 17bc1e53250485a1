// Which CPU back ends load: the AMX variant is left out on processors with AMX unless asked for.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AMX_CPU_VARIANT, chooseCpuBackends } from "../../ffi/cpu-backends.ts";

const libDir = mkdtempSync(join(tmpdir(), "llamux-cpu-backends-"));
const libraries = ["libggml-base.so", "libggml-cpu-haswell.so", "libggml-cpu-zen4.so", AMX_CPU_VARIANT, "libllama.so"];
for (const name of libraries) writeFileSync(join(libDir, name), "");
afterAll(() => rmSync(libDir, { recursive: true, force: true }));

const amxCpu = new Set(["avx512f", "amx_tile", "amx_int8"]);
const choose = (over: Partial<Parameters<typeof chooseCpuBackends>[0]>) =>
  chooseCpuBackends({ libDir, cpuFlags: amxCpu, amxRequested: false, platform: "linux", ...over });

describe("CPU back-end choice", () => {
  test("a processor without AMX loads the library directory as it is", () => {
    expect(choose({ cpuFlags: new Set(["avx2"]) })).toEqual({ dir: libDir, amxKernels: false });
  });

  test("a processor with AMX gets a directory of links without the AMX variant", () => {
    const choice = choose({});
    expect(choice.amxKernels).toBe(false);
    expect(choice.note).toContain("LLAMUX_CPU_AMX=1");
    expect(readdirSync(choice.dir).sort()).toEqual(["libggml-base.so", "libggml-cpu-haswell.so", "libggml-cpu-zen4.so"]);
    // relative inside the library directory, so the directory may move (an image's root filesystem)
    expect(readlinkSync(join(choice.dir, "libggml-cpu-zen4.so"))).toBe(join("..", "libggml-cpu-zen4.so"));
    // A second process reuses the directory the first one made.
    expect(choose({}).dir).toBe(choice.dir);
  });

  test("a links directory whose targets moved away is made again", () => {
    const moved = mkdtempSync(join(tmpdir(), "llamux-cpu-moved-"));
    for (const name of libraries) writeFileSync(join(moved, name), "");
    const first = chooseCpuBackends({ libDir: moved, cpuFlags: amxCpu, amxRequested: false, platform: "linux" }).dir;
    // a link to where the library directory used to be
    rmSync(join(first, "libggml-cpu-zen4.so"));
    symlinkSync(join(tmpdir(), "gone", "libggml-cpu-zen4.so"), join(first, "libggml-cpu-zen4.so"));
    const again = chooseCpuBackends({ libDir: moved, cpuFlags: amxCpu, amxRequested: false, platform: "linux" }).dir;
    expect(existsSync(join(again, "libggml-cpu-zen4.so"))).toBe(true);
    rmSync(moved, { recursive: true, force: true });
  });

  test("LLAMUX_CPU_AMX=1 loads the AMX variant and says so", () => {
    const choice = choose({ amxRequested: true });
    expect(choice).toMatchObject({ dir: libDir, amxKernels: true });
  });

  test("without the AMX variant (a native build, other platforms) nothing changes", () => {
    expect(choose({ platform: "darwin" })).toEqual({ dir: libDir, amxKernels: false });
    const nativeDir = mkdtempSync(join(tmpdir(), "llamux-cpu-native-"));
    writeFileSync(join(nativeDir, "libggml-cpu.so"), "");
    expect(chooseCpuBackends({ libDir: nativeDir, cpuFlags: amxCpu, amxRequested: false, platform: "linux" }).dir).toBe(nativeDir);
    rmSync(nativeDir, { recursive: true, force: true });
  });
});
