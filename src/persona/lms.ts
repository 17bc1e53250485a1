// `lms ...`: LM Studio's command line over llamux. `lms server start|stop|status` manage a background
// `llamux serve --profile c`; ls, ps, load, unload and get talk to it over HTTP (LM Studio's REST API,
// /api/v1/...), starting it first when none answers, as lms starts LM Studio's daemon.
import { parseArgs } from "node:util";
import { llamuxVersion } from "../cli/version.ts";
import { isUsageError } from "../usage-error.ts";
import { UsageError } from "../usage-error.ts";
import { answers, dialHost, lastPort, LMS_DEFAULT_PORT, runningServer, startServer, stopServer, type ServerRecord } from "./lms-server.ts";
import { formatLoadedModels, formatModelList, type LmsModel } from "./lms-format.ts";

interface LmsCommand {
  summary: string;
  usage: string;
  run(args: string[]): Promise<number>;
}

const serverHelp = `Usage: lms server <start|stop|status> [options]

Commands:
  start    Start the server in the background (llamux serve --profile c)
  stop     Stop the server started by "lms server start"
  status   Say whether the server runs, and on which port

Options of start:
  -p, --port PORT   port (default: the last one used, else ${LMS_DEFAULT_PORT})
      --bind ADDR   address to bind (default 127.0.0.1; env LMS_SERVER_HOST)
      --cors        allow requests from any website (use with care)
Options of status:
      --json        print {"running": true, "port": 1234}`;

const commands: Record<string, LmsCommand> = {
  server: { summary: "Start, stop or check the local server", usage: serverHelp, run: serverCommand },
  ls: {
    summary: "List the models you have downloaded",
    usage: "Usage: lms ls [--llm | --embedding] [--json]\n\nLists downloaded models (LLMs, then embedding models) with their parameters, architecture and size.",
    run: lsCommand,
  },
  ps: { summary: "List the models loaded in memory", usage: "Usage: lms ps [--json]\n\nLists the loaded models.", run: psCommand },
  load: {
    summary: "Load a model",
    usage: `Usage: lms load <model> [options]

Options:
  -c, --context-length N   context length in tokens
      --gpu off|max        put none or all of the model's layers on the GPU
      --ttl SECONDS        unload after this long without requests (default: never)
      --parallel N         sequences decoded together
  -y, --yes                accepted (lms asks nothing here either)`,
    run: loadCommand,
  },
  unload: { summary: "Unload a model", usage: "Usage: lms unload [<identifier>] [-a | --all]", run: unloadCommand },
  get: {
    summary: "Download a model",
    usage: "Usage: lms get <owner/name[@quantization] | https://huggingface.co/owner/repo> [-y]\n\nDownloads a GGUF model from Hugging Face into llamux's store, showing progress.",
    run: getCommand,
  },
  version: { summary: "Print the version", usage: "Usage: lms version", run: async () => (console.log(versionText()), 0) },
};

const versionText = () => `lms - LM Studio command line, served by llamux ${llamuxVersion}`;

export function lmsHelp(): string {
  const list = Object.entries(commands).map(([name, command]) => `  ${name.padEnd(9)} ${command.summary}`).join("\n");
  return `lms - LM Studio command line (llamux ${llamuxVersion})

Usage: lms <command> [options]

Commands:
${list}

Options:
  -h, --help      show this help
  -v, --version   print the version

Run "lms <command> --help" for the options of a command.`;
}

export async function lmsMain(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "-h" || first === "--help" || first === "help") {
    console.log(lmsHelp());
    return 0;
  }
  if (first === "-v" || first === "--version") {
    console.log(versionText());
    return 0;
  }
  const command = Object.hasOwn(commands, first) ? commands[first] : undefined;
  if (!command) {
    console.error(`error: unknown command '${first}'\n\n${lmsHelp()}`);
    return 2;
  }
  if (rest.includes("-h") || rest.includes("--help")) {
    console.log(command.usage);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    if (isUsageError(error)) {
      console.error(`error: ${(error as Error).message}\n\n${command.usage}`);
      return 2;
    }
    console.error(`Error: ${(error as Error).message}`);
    return 1;
  }
}

// ---- server ----

async function serverCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  const { values } = parseArgs({
    args: rest,
    options: { port: { type: "string", short: "p" }, bind: { type: "string" }, cors: { type: "boolean" }, json: { type: "boolean" } },
  });
  const running = runningServer();
  switch (action) {
    case "start": {
      const port = values.port !== undefined ? portNumber(values.port) : lastPort();
      const host = values.bind ?? process.env.LMS_SERVER_HOST ?? "127.0.0.1";
      if (running) {
        console.log(`The server is already running on port ${running.port}.`);
        return running.port === port ? 0 : 1;
      }
      if (host !== "127.0.0.1" && host !== "localhost") console.error(`Warning: the server binds ${host}: other machines that reach this address can use it.`);
      if (values.cors) console.error("Warning: CORS is on: any website you visit can use the server.");
      const record = await startServer({ host, port, cors: values.cors ?? false });
      console.log(`Success! Server is now running on port ${record.port}`);
      return 0;
    }
    case "stop":
      if (!running) {
        console.log("The server is not running.");
        return 0;
      }
      await stopServer(running);
      console.log(`Stopped the server on port ${running.port}.`);
      return 0;
    case "status":
      if (values.json) console.log(JSON.stringify(running ? { running: true, port: running.port } : { running: false }));
      else console.log(running ? `The server is running on port ${running.port}.` : "The server is not running.");
      return 0;
    default:
      throw new UsageError(action === undefined ? "missing server command (start, stop or status)" : `unknown server command '${action}'`);
  }
}

function portNumber(text: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`--port must be a port number, got "${text}"`);
  return port;
}

/** The server to talk to: the recorded one, else one answering on the last port, else a new one. */
async function server(): Promise<{ host: string; port: number }> {
  const running: ServerRecord | undefined = runningServer();
  if (running) return running;
  const port = lastPort();
  if (await answers("127.0.0.1", port)) return { host: "127.0.0.1", port };
  console.error(`Starting the server on port ${port}...`);
  return startServer({ host: process.env.LMS_SERVER_HOST ?? "127.0.0.1", port, cors: false });
}

async function api<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
  const { host, port } = await server();
  const response = await fetch(`http://${dialHost(host)}:${port}${path}`, {
    method,
    ...(body !== undefined ? { body: JSON.stringify(body), headers: { "content-type": "application/json" } } : {}),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const message = (parsed as { error?: { message?: string } | string } | undefined)?.error;
    throw new Error(typeof message === "string" ? message : message?.message ?? `${method} ${path} answered ${response.status}: ${text.slice(0, 200)}`);
  }
  return parsed as T;
}

const listModels = async () => (await api<{ models: LmsModel[] }>("GET", "/api/v1/models")).models;

// ---- models ----

async function lsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { llm: { type: "boolean" }, embedding: { type: "boolean" }, json: { type: "boolean" } } });
  let models = await listModels();
  if (values.llm) models = models.filter((model) => model.type !== "embedding");
  if (values.embedding) models = models.filter((model) => model.type === "embedding");
  if (positionals[0]) models = models.filter((model) => model.key === positionals[0]);
  console.log(values.json ? JSON.stringify(models, null, 2) : formatModelList(models));
  return 0;
}

async function psCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { json: { type: "boolean" } } });
  const loaded = (await listModels()).filter((model) => (model.loaded_instances ?? []).length > 0);
  if (values.json) console.log(JSON.stringify(loaded.flatMap((model) => model.loaded_instances!.map((instance) => ({ ...instance, model: model.key }))), null, 2));
  else console.log(formatLoadedModels(loaded));
  return 0;
}

/** lms's --gpu as the load route's gpu_layers: off is none, max (or 1) is all (-1). llama.cpp offloads whole
 * layers and the route takes a count, so a share in between is refused rather than guessed. */
function gpuLayers(text: string): number {
  if (text === "off" || text === "0") return 0;
  if (text === "max" || text === "1") return -1;
  const ratio = Number(text);
  if (!(ratio >= 0 && ratio <= 1)) throw new UsageError(`--gpu must be off, max or a number from 0 to 1, got "${text}"`);
  throw new UsageError(`--gpu ${text}: llamux offloads all layers or none from lms; use --gpu max or --gpu off`);
}

async function loadCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      "context-length": { type: "string", short: "c" }, gpu: { type: "string" }, ttl: { type: "string" }, identifier: { type: "string" },
      parallel: { type: "string" }, yes: { type: "boolean", short: "y" },
    },
  });
  const model = positionals[0];
  if (!model) throw new UsageError("name the model to load (see lms ls)");
  const positive = (text: string | undefined, flag: string) => {
    if (text === undefined) return undefined;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${flag} must be a positive integer, got "${text}"`);
    return n;
  };
  const body = {
    model,
    ...(values["context-length"] !== undefined ? { context_length: positive(values["context-length"], "context-length") } : {}),
    ...(values.gpu !== undefined ? { gpu_layers: gpuLayers(values.gpu) } : {}),
    ...(values.ttl !== undefined ? { ttl: positive(values.ttl, "ttl") } : {}),
    ...(values.parallel !== undefined ? { parallel: positive(values.parallel, "parallel") } : {}),
  };
  if (values.identifier !== undefined) console.error(`Warning: --identifier is not supported; the instance is named after its model.`);
  console.error(`Loading model "${model}"...`);
  const result = await api<{ instance_id?: string; load_time_seconds?: number }>("POST", "/api/v1/models/load", body);
  const seconds = result.load_time_seconds !== undefined ? ` in ${result.load_time_seconds.toFixed(2)}s` : "";
  console.log(`Model loaded successfully${seconds}.`);
  console.log(`To use the model in the API, use the identifier "${result.instance_id ?? model}".`);
  return 0;
}

async function unloadCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { all: { type: "boolean", short: "a" } } });
  const loaded = (await listModels()).flatMap((model) => (model.loaded_instances ?? []).map((instance) => instance.id));
  const targets = values.all ? loaded : positionals.slice(0, 1);
  if (targets.length === 0) {
    if (!values.all) throw new UsageError("name the model to unload, or pass --all");
    console.log("No models to unload.");
    return 0;
  }
  for (const id of targets) {
    await api("POST", "/api/v1/models/unload", { instance_id: id });
    console.log(`Model "${id}" unloaded.`);
  }
  return 0;
}

interface DownloadStatus {
  job_id?: string;
  status: string;
  downloaded_bytes?: number;
  total_size_bytes?: number;
  bytes_per_second?: number;
  error?: string | { message?: string };
}

async function getCommand(args: string[]): Promise<number> {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: { yes: { type: "boolean", short: "y" }, gguf: { type: "boolean" } } });
  const name = positionals[0];
  if (!name) throw new UsageError("name the model to download, e.g. lms get LiquidAI/LFM2-1.2B-GGUF@Q4_K_M");
  const [model, quantization] = name.split("@") as [string, string | undefined];
  let status = await api<DownloadStatus>("POST", "/api/v1/models/download", { model, ...(quantization ? { quantization } : {}) });
  const tty = process.stderr.isTTY;
  while (status.status === "downloading" || status.status === "paused") {
    const done = status.downloaded_bytes ?? 0;
    const total = status.total_size_bytes ?? 0;
    const percent = total > 0 ? ((done / total) * 100).toFixed(1) : "?";
    const line = `Downloading ${model}: ${percent}% (${(done / 1e6).toFixed(1)} / ${(total / 1e6).toFixed(1)} MB, ${((status.bytes_per_second ?? 0) / 1e6).toFixed(1)} MB/s)`;
    process.stderr.write(tty ? `\r${line}\u001b[K` : `${line}\n`);
    await Bun.sleep(tty ? 250 : 1000);
    status = await api<DownloadStatus>("GET", `/api/v1/models/download/status/${encodeURIComponent(status.job_id ?? "")}`);
  }
  if (tty) process.stderr.write("\n");
  if (status.status === "failed") {
    const error = typeof status.error === "string" ? status.error : status.error?.message;
    throw new Error(`download of ${model} failed${error ? `: ${error}` : ""}`);
  }
  console.log(status.status === "already_downloaded" ? `${model} is already downloaded.` : `Download completed: ${model}`);
  return 0;
}
