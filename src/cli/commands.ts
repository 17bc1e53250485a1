// The table of sub-commands. Each lives in its own module, loaded only when it runs, so `--help` or
// `--version` does not pay for the engine or the server.
import type { HelpPage } from "./help-layout.ts";

/** What a command module provides. A command returns its exit code, or undefined when it keeps the
 * process alive on its own (the engine child serves its parent until told to stop). */
export interface Command {
  help: string;
  /** What the help shows, as data: docs/configuration.md lists its flags and environment. */
  page?: HelpPage;
  run(args: string[]): Promise<number | undefined>;
}

export interface CommandEntry {
  summary: string;
  /** Internal commands are left out of the help. */
  hidden?: boolean;
  load(): Promise<Command>;
}

const engineHelp = `Usage: llamux __engine

Internal: a llamux process starts this to host one model's engine and talks to it over IPC.`;

export const commands: Record<string, CommandEntry> = {
  run: {
    summary: "Chat with a model, or answer one prompt (GGUF path, stored model, or a name to pull)",
    load: async () => {
      const { runHelp, runPage, runCommand } = await import("./run.ts");
      return { help: runHelp, page: runPage, run: runCommand };
    },
  },
  create: {
    summary: "Create a model from a Modelfile",
    load: async () => {
      const { createHelp, createPage, createCommand } = await import("./create.ts");
      return { help: createHelp, page: createPage, run: createCommand };
    },
  },
  pull: {
    summary: "Download a model from the Hugging Face hub (hf.co/...) or an Ollama registry",
    load: async () => {
      const { pullHelp, pullPage, pullCommand } = await import("./pull.ts");
      return { help: pullHelp, page: pullPage, run: pullCommand };
    },
  },
  push: {
    summary: "Upload a model from the store to an Ollama registry",
    load: async () => {
      const { pushHelp, pushPage, pushCommand } = await import("./push.ts");
      return { help: pushHelp, page: pushPage, run: pushCommand };
    },
  },
  list: {
    summary: "List the models in the store (alias: ls)",
    load: async () => {
      const { listHelp, listPage, listCommand } = await import("./list.ts");
      return { help: listHelp, page: listPage, run: listCommand };
    },
  },
  ls: {
    summary: "List the models in the store",
    hidden: true,
    load: async () => (await commands.list!.load()),
  },
  show: {
    summary: "Show a model's details, Modelfile, parameters, template, system prompt or license",
    load: async () => {
      const { showHelp, showPage, showCommand } = await import("./show.ts");
      return { help: showHelp, page: showPage, run: showCommand };
    },
  },
  launch: {
    summary: "Run a coding agent (claude, codex, opencode, qwen, cn) against the running server",
    load: async () => {
      const { launchHelp, launchPage, launchCommand } = await import("./launch.ts");
      return { help: launchHelp, page: launchPage, run: launchCommand };
    },
  },
  ps: {
    summary: "List the models a running server has loaded",
    load: async () => {
      const { psHelp, psPage, psCommand } = await import("./ps.ts");
      return { help: psHelp, page: psPage, run: psCommand };
    },
  },
  stop: {
    summary: "Unload a model from a running server",
    load: async () => {
      const { stopHelp, stopPage, stopCommand } = await import("./stop.ts");
      return { help: stopHelp, page: stopPage, run: stopCommand };
    },
  },
  cp: {
    summary: "Copy a model to a new name",
    load: async () => {
      const { cpHelp, cpPage, cpCommand } = await import("./cp.ts");
      return { help: cpHelp, page: cpPage, run: cpCommand };
    },
  },
  rm: {
    summary: "Remove models and the blobs no other model uses",
    load: async () => {
      const { rmHelp, rmPage, rmCommand } = await import("./rm.ts");
      return { help: rmHelp, page: rmPage, run: rmCommand };
    },
  },
  serve: {
    summary: "Serve models over HTTP as Ollama (a), vLLM (b) or LM Studio (c) do",
    load: async () => {
      const { serveHelp, servePage, serveCommand } = await import("./serve.ts");
      return { help: serveHelp, page: servePage, run: serveCommand };
    },
  },
  keys: {
    summary: "Create, list and revoke the server's named API keys (scopes, limits) and show their usage",
    load: async () => {
      const { keysHelp, keysPage, keysCommand } = await import("./keys.ts");
      return { help: keysHelp, page: keysPage, run: keysCommand };
    },
  },
  mcp: {
    summary: "List the MCP servers in mcp.json and the tools each one offers",
    load: async () => {
      const { mcpHelp, mcpPage, mcpCommand } = await import("./mcp.ts");
      return { help: mcpHelp, page: mcpPage, run: mcpCommand };
    },
  },
  version: {
    summary: "Print the versions of llamux and llama.cpp",
    load: async () => {
      const { versionHelp, versionPage, versionCommand } = await import("./version.ts");
      return { help: versionHelp, page: versionPage, run: versionCommand };
    },
  },
  "rpc-server": {
    summary: "Serve this machine's devices to other llamux servers over llama.cpp's RPC protocol",
    load: async () => {
      const { rpcServerHelp, rpcServerPage, rpcServerCommand } = await import("./rpc-server.ts");
      return { help: rpcServerHelp, page: rpcServerPage, run: rpcServerCommand };
    },
  },
  generate: {
    summary: "Write Kubernetes manifests for a pool of profile-b replicas (llamux generate kube)",
    load: async () => {
      const { generateHelp, generatePage, generateCommand } = await import("./generate.ts");
      return { help: generateHelp, page: generatePage, run: generateCommand };
    },
  },
  health: {
    summary: "Exit 0 when a running server answers its readiness probe (for container health checks)",
    load: async () => {
      const { healthHelp, healthPage, healthCommand } = await import("./health.ts");
      return { help: healthHelp, page: healthPage, run: healthCommand };
    },
  },
  doctor: {
    summary: "Report the libraries, CPU, GPUs, model store and ports llamux finds here",
    load: async () => {
      const { doctorHelp, doctorPage, doctorCommand } = await import("./doctor.ts");
      return { help: doctorHelp, page: doctorPage, run: doctorCommand };
    },
  },
  "install-service": {
    summary: "Install llamux as a hardened systemd service (root)",
    load: async () => {
      const { installServiceHelp, installServicePage, installServiceCommand } = await import("./install-service.ts");
      return { help: installServiceHelp, page: installServicePage, run: installServiceCommand };
    },
  },
  "uninstall-service": {
    summary: "Stop and remove the llamux systemd service (root)",
    load: async () => {
      const { uninstallServiceHelp, uninstallServicePage, uninstallServiceCommand } = await import("./uninstall-service.ts");
      return { help: uninstallServiceHelp, page: uninstallServicePage, run: uninstallServiceCommand };
    },
  },
  help: {
    summary: "Show the help of llamux or of a command",
    load: async () => {
      const { helpHelp, helpPage, helpCommand } = await import("./help.ts");
      return { help: helpHelp, page: helpPage, run: helpCommand };
    },
  },
  "serve-container": {
    summary: "The container image's entry point: vLLM's container interface on 0.0.0.0:8000",
    hidden: true,
    load: async () => {
      const { serveContainerHelp, serveContainerPage, serveContainerCommand } = await import("./serve-container.ts");
      return { help: serveContainerHelp, page: serveContainerPage, run: serveContainerCommand };
    },
  },
  __quantize: {
    summary: "Quantize a GGUF file for a parent llamux process",
    hidden: true,
    load: async () => {
      const { quantizeHelp, quantizeMain } = await import("../store/quantize-main.ts");
      return { help: quantizeHelp, run: async (args) => quantizeMain(args) };
    },
  },
  "__decode-webp": {
    summary: "Decode a WebP image (stdin) into RGB pixels (stdout) for a parent llamux process",
    hidden: true,
    load: async () => {
      const { decodeWebpMain } = await import("../vision/webp-decode.ts");
      return { help: "Usage: llamux __decode-webp < image.webp", run: async () => decodeWebpMain() };
    },
  },
  __engine: {
    summary: "Host one model's engine for a parent llamux process",
    hidden: true,
    load: async () => {
      const { engineChildMain } = await import("../engine/child-main.ts");
      return {
        help: engineHelp,
        run: async (args) => {
          if (args.includes("--help") || args.includes("-h")) {
            console.log(engineHelp);
            return 0;
          }
          await engineChildMain();
          return undefined;
        },
      };
    },
  },
};

/** The command called `name`, hidden ones included; undefined for anything else (`__proto__` too). */
export function findCommand(name: string): CommandEntry | undefined {
  return Object.hasOwn(commands, name) ? commands[name] : undefined;
}
