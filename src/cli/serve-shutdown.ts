// What `llamux serve` does on SIGTERM or SIGINT: stop taking connections, end the requests in flight
// with an error that each open stream still sends in its API's shape, close every MCP session (a stdio
// server gets stdin's end, then SIGTERM, then SIGKILL, as MCP's lifecycle asks), and exit once the streams
// have ended or a bound has passed.
import type { Server } from "bun";
import type { ModelManager } from "../engine/model-manager.ts";
import type { McpHub } from "../mcp/mcp-hub.ts";
import { logger } from "../log.ts";

const log = logger("serve");

/** How long answers may take to go out once the engines have stopped (a WebSocket never ends by itself). */
export const DRAIN_MS = 3_000;

export class ServeShutdown {
  private readonly listeners: Array<Server<undefined>> = [];
  private readonly hubs: McpHub[] = [];
  private running?: Promise<void>;

  constructor(private readonly manager: ModelManager) {}

  addListener(server: Server<undefined> | undefined): void {
    if (server) this.listeners.push(server);
  }

  addHub(hub: McpHub): void {
    this.hubs.push(hub);
  }

  install(): void {
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      process.once(signal, () => void this.run(signal).finally(() => process.exit(0)));
    }
  }

  /** Everything but the exit; a second call gets the first one's promise. */
  run(signal: string): Promise<void> {
    this.running ??= this.stop(signal);
    return this.running;
  }

  private async stop(signal: string): Promise<void> {
    log.info(`${signal} received: stopping engines and MCP servers`);
    // No new connections; those with a request in flight close once its answer has gone out.
    const drained = Promise.all(this.listeners.map((server) => server.stop(false)));
    await Promise.all([
      this.manager.stopAll().then(() => Promise.race([drained, Bun.sleep(DRAIN_MS)])),
      ...this.hubs.map((hub) => hub.close()),
    ]);
  }
}
