// Servers for the coding-agent APIs' tests (Responses, Messages): one `llamux serve` per profile with
// the tiny chat model served as "tiny-agent", its vision projector beside it, and an API key on
// profile b; plus the paths of the other models requests name (a reasoning model, LFM2).
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startServer, type RunningServer } from "./serve-fixture.ts";

export type Profile = "a" | "b" | "c";
export const PROFILES = ["a", "b", "c"] as const;
export const MODEL = "tiny-agent";
export const KEY = "agents-secret";

export interface AgentServers {
  servers: Record<Profile, RunningServer>;
  /** The key a client of the profile sends (profile b requires one). */
  keyOf(profile: Profile): string;
  thinkModel: string;
  lfm2Model: string;
  /** A 16x16 JPEG as base64. */
  jpegBase64: string;
  stop(): Promise<void>;
}

export async function startAgentServers(): Promise<AgentServers> {
  const dir = mkdtempSync(join(tmpdir(), "llamux-agents-"));
  symlinkSync(await ensureModel("tiny-llama"), join(dir, `${MODEL}.gguf`));
  symlinkSync(await ensureModel("tiny-mmproj"), join(dir, `mmproj-${MODEL}.gguf`));
  const thinkModel = await ensureModel("tiny-llama-think");
  const lfm2Model = await ensureModel("tiny-lfm2");
  const jpeg = await Bun.file(join(import.meta.dir, "..", "fixtures", "images", "python-16.jpg")).arrayBuffer();
  const common = [join(dir, `${MODEL}.gguf`), "--served-model-name", MODEL, "--ctx-size", "1024", "--parallel", "2", "--threads", "2"];
  const servers: Partial<Record<Profile, RunningServer>> = {};
  for (const profile of PROFILES) servers[profile] = await startServer([...common, "--profile", profile, ...(profile === "b" ? ["--api-key", KEY] : [])]);
  return {
    servers: servers as Record<Profile, RunningServer>,
    keyOf: (profile) => (profile === "b" ? KEY : "placeholder"),
    thinkModel, lfm2Model,
    jpegBase64: Buffer.from(jpeg).toString("base64"),
    async stop() {
      await Promise.all(Object.values(servers).map((s) => s.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
