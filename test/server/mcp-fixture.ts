// Servers for the MCP tests: one `llamux serve` per profile with the tiny chat model, an mcp.json naming
// real MCP servers (server-everything and server-filesystem over stdio, the misbehaving fixture server),
// --allow-request-mcp and --allow-private-mcp-urls (the URL tests use a loopback Streamable HTTP
// server-everything), a short --mcp-call-timeout, and an API key on profile b.
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { everythingEntry, filesystemEntry, misbehavingEntry, startEverythingHttp, type HttpMcpServer } from "../fixtures/mcp-servers.ts";
import { startServer, type RunningServer } from "./serve-fixture.ts";

export type Profile = "a" | "b" | "c";
export const PROFILES = ["a", "b", "c"] as const;
export const MODEL = "tiny-mcp";
export const KEY = "mcp-secret";
/** --mcp-call-timeout of the servers, in seconds. */
export const CALL_TIMEOUT_S = 2;

export interface McpServers {
  servers: Record<Profile, RunningServer>;
  keyOf(profile: Profile): string;
  /** The directory server-filesystem serves. */
  filesDir: string;
  /** The mcp.json the servers read. */
  configPath: string;
  /** server-everything over Streamable HTTP on loopback. */
  http: HttpMcpServer;
  modelPath: string;
  stop(): Promise<void>;
}

export async function startMcpServers(profiles: readonly Profile[] = PROFILES): Promise<McpServers> {
  const dir = mkdtempSync(join(tmpdir(), "llamux-mcp-serve-"));
  const filesDir = join(dir, "files");
  Bun.spawnSync(["mkdir", "-p", filesDir]);
  writeFileSync(join(filesDir, "readme.txt"), "a file for the MCP tests\n");
  const modelPath = join(dir, `${MODEL}.gguf`);
  symlinkSync(await ensureModel("tiny-llama"), modelPath);
  const configPath = join(dir, "mcp.json");
  writeFileSync(configPath, JSON.stringify({
    mcpServers: { everything: everythingEntry(), files: filesystemEntry(filesDir), bad: misbehavingEntry() },
  }, null, 2));
  const http = await startEverythingHttp();
  const common = [
    modelPath, "--served-model-name", MODEL, "--ctx-size", "2048", "--parallel", "2", "--threads", "2",
    "--mcp-config", configPath, "--allow-request-mcp", "--allow-private-mcp-urls", "--mcp-call-timeout", String(CALL_TIMEOUT_S),
  ];
  const servers: Partial<Record<Profile, RunningServer>> = {};
  for (const profile of profiles) servers[profile] = await startServer([...common, "--profile", profile, ...(profile === "b" ? ["--api-key", KEY] : [])]);
  return {
    servers: servers as Record<Profile, RunningServer>,
    keyOf: (profile) => (profile === "b" ? KEY : "placeholder"),
    filesDir, configPath, http, modelPath,
    async stop() {
      await Promise.all(Object.values(servers).map((s) => s.stop()));
      await http.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
