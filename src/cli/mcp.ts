// `llamux mcp list`: the MCP servers `llamux serve` would offer (mcp.json), each started or connected
// to, with the tools it lists; a server that cannot be reached is shown with the reason.
import { parseArgs } from "node:util";
import { loadMcpConfig, type McpServerConfig } from "../mcp/mcp-config.ts";
import { McpHub } from "../mcp/mcp-hub.ts";
import { printable } from "../printable.ts";
import { profileNamesOf, profiles, type ProfileName } from "../server/profiles/index.ts";
import { UsageError } from "../usage-error.ts";

export const mcpHelp = `Usage: llamux mcp list [options]

Lists the MCP servers in mcp.json (the format of Cursor, Claude Desktop and LM Studio:
{"mcpServers": {NAME: {"command", "args", "env"} | {"url", "headers"}}}) with the tools each one
lists. Each server is started (a command) or connected to (a url) to list them.

Where the servers come from, as for \`llamux serve\`: --mcp-config FILE alone when given, else
~/.llamux/mcp.json, and with --profile c (or all) LM Studio's ~/.lmstudio/mcp.json too.

Options:
      --mcp-config FILE   the mcp.json to read
      --profile a|b|c|all which default files to read (default a)
  -h, --help              show this help

Exit status: 0 when every server listed its tools, 1 when one could not.`;

// What a server lists is its own text: escaped and cut, so that it can neither drive the terminal nor
// widen every line of the table.
const NAME_WIDTH = 48;
const DESCRIPTION_WIDTH = 100;
const MESSAGE_WIDTH = 500;

const describeServer = (server: McpServerConfig) =>
  printable(server.kind === "stdio" ? `command: ${[server.command, ...server.args].join(" ")}` : `url: ${server.url}${server.sse ? " (SSE)" : ""}`, MESSAGE_WIDTH);

const firstLine = (text: string | undefined) => printable((text ?? "").split("\n")[0]!, DESCRIPTION_WIDTH);

export async function mcpCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args, allowPositionals: true,
    options: { help: { type: "boolean", short: "h" }, "mcp-config": { type: "string" }, profile: { type: "string" } },
  });
  if (values.help) {
    console.log(mcpHelp);
    return 0;
  }
  if (positionals[0] !== "list" || positionals.length > 1) throw new UsageError('mcp takes one sub-command: "list" (see llamux mcp --help)');
  const profile = values.profile ?? "a";
  if (!["a", "b", "c", "all"].includes(profile)) throw new UsageError(`--profile must be a, b, c or all, got "${profile}"`);
  const lmStudioConfig = profileNamesOf(profile as ProfileName | "all").some((name) => profiles[name].lmStudioMcpConfig);
  const config = loadMcpConfig(values["mcp-config"], lmStudioConfig);
  if (config.servers.size === 0) {
    console.log("No MCP servers are configured (add them to ~/.llamux/mcp.json or pass --mcp-config FILE)");
    return 0;
  }
  const hub = new McpHub(config);
  let failed = false;
  try {
    for (const server of config.servers.values()) {
      console.log(`${server.name}  (${describeServer(server)})`);
      const [listed] = (await hub.open([{ label: server.name, source: { configured: server.name }, param: "" }])).servers;
      if (!listed || "failure" in listed) {
        failed = true;
        console.log(`  cannot list its tools: ${printable(listed?.failure.message ?? "unknown failure", MESSAGE_WIDTH)}`);
        continue;
      }
      const names = listed.tools.map((tool) => printable(tool.name, NAME_WIDTH));
      const width = Math.max(0, ...names.map((name) => name.length));
      for (const [index, tool] of listed.tools.entries()) console.log(`  ${names[index]!.padEnd(width)}  ${firstLine(tool.description)}`.trimEnd());
      if (listed.tools.length === 0) console.log("  (no tools)");
    }
  } finally {
    await hub.close();
  }
  return failed ? 1 : 0;
}
