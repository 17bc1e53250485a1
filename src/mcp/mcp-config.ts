// The MCP servers an operator configured: an `mcp.json` in the format Cursor, Claude Desktop and LM Studio
// share, {"mcpServers": {NAME: {command, args, env, cwd} | {url, headers, type}}}. Only these may be
// spawned as processes; requests name them by NAME and never name a command themselves. Read from
// `--mcp-config FILE`, else llamux's ~/.llamux/mcp.json, and on profile c also LM Studio's
// ~/.lmstudio/mcp.json (llamux's own entry wins where both name a server).
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";

export interface StdioServerConfig {
  kind: "stdio";
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
}

export interface HttpServerConfig {
  kind: "http";
  name: string;
  url: string;
  headers?: Record<string, string>;
  /** The older HTTP+SSE transport ("type": "sse"); default Streamable HTTP. */
  sse: boolean;
}

export type McpServerConfig = StdioServerConfig | HttpServerConfig;

export interface McpConfig {
  servers: Map<string, McpServerConfig>;
  /** The files read, for messages. */
  sources: string[];
}

export const emptyMcpConfig = (): McpConfig => ({ servers: new Map(), sources: [] });

const SERVER_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

const stringMap = z.record(z.string(), z.string());

const serverEntry = z.looseObject({
  command: z.string().min(1).optional(),
  args: z.array(z.string()).optional(),
  env: stringMap.optional(),
  cwd: z.string().optional(),
  url: z.string().min(1).optional(),
  headers: stringMap.optional(),
  type: z.string().optional(),
  transport: z.string().optional(),
  disabled: z.boolean().optional(),
});

const configFile = z.looseObject({ mcpServers: z.record(z.string(), serverEntry).optional() });

/** Thrown for an mcp.json that cannot be used: start-up stops with its message. */
export class McpConfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "McpConfigError";
  }
}

function serverConfig(name: string, entry: z.infer<typeof serverEntry>, source: string): McpServerConfig {
  const where = `server "${name}" in ${source}`;
  if (!SERVER_NAME.test(name)) throw new McpConfigError(`Cannot use ${where}: a name has 1 to 64 letters, digits, "_", "." or "-"`);
  if (entry.command !== undefined && entry.url !== undefined) throw new McpConfigError(`Cannot use ${where}: give either "command" or "url", not both`);
  if (entry.command !== undefined) {
    return {
      kind: "stdio", name, command: entry.command, args: entry.args ?? [],
      ...(entry.env ? { env: entry.env } : {}), ...(entry.cwd ? { cwd: entry.cwd } : {}),
    };
  }
  if (entry.url !== undefined) {
    let url: URL;
    try {
      url = new URL(entry.url);
    } catch {
      throw new McpConfigError(`Cannot use ${where}: "${entry.url}" is not a URL`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new McpConfigError(`Cannot use ${where}: only http and https URLs are served`);
    const type = (entry.type ?? entry.transport ?? "").toLowerCase();
    return { kind: "http", name, url: url.href, ...(entry.headers ? { headers: entry.headers } : {}), sse: type === "sse" };
  }
  throw new McpConfigError(`Cannot use ${where}: it needs "command" (a process to spawn) or "url" (a server to connect to)`);
}

/** The servers of one mcp.json's text; `source` names it in errors. Disabled entries are left out. */
export function parseMcpConfig(text: string, source: string): McpConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new McpConfigError(`Cannot read ${source}: it is not JSON (${(error as Error).message})`, { cause: error });
  }
  const parsed = configFile.safeParse(json);
  if (!parsed.success) throw new McpConfigError(`Cannot read ${source}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`).join("; ")}`);
  const servers = new Map<string, McpServerConfig>();
  for (const [name, entry] of Object.entries(parsed.data.mcpServers ?? {})) {
    if (entry.disabled) continue;
    servers.set(name, serverConfig(name, entry, source));
  }
  return { servers, sources: [source] };
}

export function readMcpConfigFile(path: string): McpConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new McpConfigError(`Cannot read MCP config "${path}": ${(error as Error).message}`, { cause: error });
  }
  return parseMcpConfig(text, path);
}

/** Several configs as one; an earlier one wins where two name the same server. */
export function mergeMcpConfigs(configs: McpConfig[]): McpConfig {
  const merged = emptyMcpConfig();
  for (const config of configs) {
    merged.sources.push(...config.sources);
    for (const [name, server] of config.servers) if (!merged.servers.has(name)) merged.servers.set(name, server);
  }
  return merged;
}

/** llamux's own mcp.json, then (where LM Studio's paths are read) LM Studio's. */
export function defaultMcpConfigPaths(withLmStudio: boolean, env: Record<string, string | undefined> = process.env): string[] {
  const home = env.HOME || homedir();
  return [join(home, ".llamux", "mcp.json"), ...(withLmStudio ? [join(home, ".lmstudio", "mcp.json")] : [])];
}

/** `--mcp-config FILE` alone when given (it must exist), else the default files that exist. */
export function loadMcpConfig(file: string | undefined, withLmStudio: boolean, env: Record<string, string | undefined> = process.env): McpConfig {
  if (file !== undefined) return readMcpConfigFile(file);
  return mergeMcpConfigs(defaultMcpConfigPaths(withLmStudio, env).filter((path) => existsSync(path)).map(readMcpConfigFile));
}
