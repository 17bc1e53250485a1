// Parent side of an engine child process: starts `llamux __engine`, loads a model in it, and turns an
// unexpected exit into an error for every request in flight (EngineClient routes the rest). The
// parent never opens libllama itself.
import { fileURLToPath } from "node:url";
import type { Subprocess } from "bun";
import type { ChildMessage, ParentMessage } from "./protocol.ts";
import { EngineError, type EngineOptions } from "./types.ts";
import { EngineClient } from "./engine-client.ts";
import { isCompiledExecutable, moduleUrl } from "../binary/self.ts";
import { isRpcAbort, rpcAbortNote, rpcServerNames } from "./rpc-failure.ts";
import { rpcJoinTimeoutMs } from "../config.ts";

/** The command that re-invokes this program as an engine child. */
function childCommand(): string[] {
  return isCompiledExecutable ? [process.execPath, "__engine"] : [process.execPath, fileURLToPath(moduleUrl("./child-main", import.meta.url))];
}

export class EngineProcess extends EngineClient {
  private stopping = false;
  private child!: Subprocess;

  private constructor(options: EngineOptions) {
    super(options);
  }

  /** Starts a child and loads the model; rejects with the child's reason if loading fails. */
  /** `onExit` learns whether the exit was asked for (stop) or not (a crash, a kill). */
  static start(options: EngineOptions, onExit?: (process: EngineProcess, reason: string, expected: boolean) => void): Promise<EngineProcess> {
    return new Promise((resolve, reject) => {
      const engine = new EngineProcess(options);
      // a server that answers the probe (rpc-probe.ts) and then not the back end would hold the load forever
      const joinLimitMs = options.rpcServers?.length ? rpcJoinTimeoutMs() : 0;
      let loaded = false;
      engine.child = Bun.spawn(childCommand(), {
        stdio: ["ignore", "inherit", "inherit"],
        env: process.env,
        ipc: (message: ChildMessage) => {
          if (message.type === "loaded") {
            loaded = true;
            clearTimeout(rpcJoin);
            engine.info = message.info;
            resolve(engine);
          } else if (message.type === "load_failed") {
            clearTimeout(rpcJoin);
            reject(new EngineError(message.code ?? "engine_failure", message.message));
            engine.stopping = true;
            engine.kill();
          } else if (message.type === "rpc_joining") {
            rpcJoin = setTimeout(() => {
              reject(new EngineError("rpc_unavailable", `Cannot load model "${options.modelPath}": llama.cpp's RPC back end did not finish joining ${rpcServerNames(options.rpcServers ?? [])} within ${joinLimitMs / 1000} s`));
              engine.stopping = true;
              engine.kill();
            }, joinLimitMs);
          } else if (message.type === "rpc_joined") {
            clearTimeout(rpcJoin);
          } else {
            engine.receive(message);
          }
        },
        onExit: (_proc, exitCode, signalCode) => {
          clearTimeout(rpcJoin);
          const reason = signalCode ? `killed by ${signalCode}` : `exit code ${exitCode}`;
          engine.handleExit(reason);
          if (!loaded) {
            reject(isRpcAbort(options.rpcServers, reason)
              ? new EngineError("rpc_failure", `Cannot load model "${options.modelPath}": engine process ended (${reason}): ${rpcAbortNote(options.rpcServers!)}`)
              : new EngineError("engine_failure", `Cannot load model "${options.modelPath}": engine process ended (${reason})`));
          }
          onExit?.(engine, reason, engine.stopping);
        },
      });
      let rpcJoin: ReturnType<typeof setTimeout> | undefined;
      engine.post({ type: "load", options });
    });
  }

  get pid(): number {
    return this.child.pid;
  }

  /** Asks the child to finish and waits; kills it if it does not exit within `graceMs`. */
  async stop(graceMs = 3000): Promise<void> {
    if (this.exited) return;
    this.stopping = true;
    this.post({ type: "shutdown" });
    const timer = setTimeout(() => this.kill("SIGKILL"), graceMs);
    await this.child.exited;
    clearTimeout(timer);
  }

  kill(signal: NodeJS.Signals = "SIGKILL"): void {
    if (!this.exited) this.child.kill(signal);
  }

  protected send(message: ParentMessage): void {
    // The child may have exited before its exit was handled: that handler fails what is in flight.
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.send(message);
  }
}
