// `llamux doctor` on this machine, and what `llamux` alone prints.
import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const main = join(import.meta.dir, "..", "..", "src", "main.ts");

async function llamux(args: string[], env: Record<string, string> = {}) {
  const child = Bun.spawn([process.execPath, main, ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

test("doctor reports the library variant, CPU, GPU state, store, speech and ports", async () => {
  const store = mkdtempSync(join(tmpdir(), "llamux-doctor-"));
  // A port in use shows as such: hold 1234 (LM Studio's) if nobody else does.
  const holder = createServer();
  const held = await new Promise<boolean>((resolve) => {
    holder.once("error", () => resolve(false));
    holder.listen(1234, "127.0.0.1", () => resolve(true));
  });
  try {
    const voices = mkdtempSync(join(tmpdir(), "llamux-doctor-voices-"));
    writeFileSync(join(voices, "narrator.wav"), "");
    const { code, stdout } = await llamux(["doctor"], { LLAMUX_MODELS: store, LLAMUX_VOICES: voices });
    expect(code).toBe(0);
    expect(stdout).toMatch(/native libraries\s+linux-x64-(cpu|cuda|vulkan)/);
    expect(stdout).toMatch(/CPU features\s+.*AVX|CPU features\s+.*NEON|CPU features/);
    expect(stdout).toMatch(/GPU\s+(none found: models run on the CPU|.+GiB free)/);
    expect(stdout).toContain(`model store       ${store}: no models yet`);
    expect(stdout).toMatch(/free space\s+\d+\.\d GiB/);
    expect(stdout).toMatch(/speech\s+text-to-speech models .*formats mp3, opus, flac, wav, pcm/);
    expect(stdout).toContain(`${voices}: narrator`);
    if (held) expect(stdout).toMatch(/port 1234\s+in use \(profile c, LM Studio\)/);
  } finally {
    holder.close();
  }
});

test("llamux without arguments says what to do next and exits 0", async () => {
  const { code, stdout } = await llamux([], { LLAMUX_MODELS: mkdtempSync(join(tmpdir(), "llamux-welcome-")) });
  expect(code).toBe(0);
  expect(stdout).toContain("llamux pull hf.co/");
  expect(stdout).toContain("llamux serve --profile all");
  expect(stdout).toContain("llamux --help");
});
