// `llamux serve [MODEL]`: the HTTP server. One listener per profile (a: Ollama on 11434, b: vLLM on
// 8000, c: LM Studio on 1234, all: the three at once), all sharing one model manager.
import { parseArgs } from "node:util";
import type { Server, WebSocketHandler } from "bun";
import { existsSync, readFileSync } from "node:fs";
import { ModelManager } from "../engine/model-manager.ts";
import { createApp } from "../server/app.ts";
import type { ModelService } from "../server/model-service.ts";
import { StartupReadiness } from "../server/readiness.ts";
import { listenForSdkDiscovery, sdkDiscoveryPort, SDK_DISCOVERY_PORT } from "../server/lmstudio/sdk/discovery.ts";
import { endpointWebSocket } from "../server/websocket-endpoints.ts";
import { loadRealtimeConfig, type RealtimeSettings } from "../server/realtime-config.ts";
import { ModelStore } from "../store/model-store.ts";
import { cacheDiskSettings, ensureCacheDiskDir } from "../engine/prompt-cache/disk-settings.ts";
import { defaultImageFetchPolicy } from "../vision/image-fetch.ts";
import { emptyMcpConfig, loadMcpConfig } from "../mcp/mcp-config.ts";
import { McpHub } from "../mcp/mcp-hub.ts";
import { DEFAULT_MCP_LIMITS } from "../mcp/mcp-limits.ts";
import { isHubName } from "../store/model-name.ts";
import { pullWithProgress } from "./pull.ts";
import { ServeShutdown } from "./serve-shutdown.ts";
import { type Profile, profileNamesOf, profiles, type ProfileName } from "../server/profiles/index.ts";
import { listen, type ListenerSetup } from "../server/listener.ts";
import { UsageError } from "../usage-error.ts";
import { engineFlagOptions, engineFlags, toolCallParserFlag } from "./engine-flags.ts";
import { speculativeFlags, speculativeFromFlags } from "./speculative-flags.ts";
import { expandLoraModules, loraFlags, loraFromFlags } from "./lora-flags.ts";
import { LoraRegistry } from "../server/lora-registry.ts";
import { exposureWarnings, openNamedKeys, serverOptionFlags, serverOptionsFromFlags } from "./server-flags.ts";
import { helpFlag, renderHelp, type Flags, type HelpPage } from "./help-layout.ts";
import { logger } from "../log.ts";
import {
  envVars, ollamaContextLength, ollamaDebug, ollamaFlashAttention, ollamaHost, ollamaKeepAliveMs, ollamaKvCacheType,
  ollamaMaxLoadedModels, ollamaMaxQueue, ollamaNumParallel, pullTimeoutMs, runtimeLoraUpdating, voicesDir,
} from "../config.ts";

const log = logger("serve");

/** serve's own flags; the engine's, speculation's and the listeners' come from their modules. */
export const serveFlags = {
  profile: { type: "string", value: "a|b|c|all", help: "a: Ollama (port 11434), b: vLLM (8000), c: LM Studio (1234), all: the three at once (default a)" },
  host: { type: "string", value: "HOST", help: "address to bind (default 127.0.0.1; LLAMUX_HOST=host:port sets both)" },
  port: { type: "string", value: "PORT", help: "port (not with --profile all)" },
  model: { type: "string", value: "MODEL", help: "the model, as vLLM's container passes it" },
  "served-model-name": { type: "string", value: "NAME", help: "the name clients use for MODEL (default: MODEL as given)" },
  "ctx-size": { type: "string", value: "N", help: "context per sequence in tokens (profiles a and c default to 4096, b to the model's trained context within memory); a request that needs more grows it within the trained context and memory (on b only without this flag)" },
  "max-model-len": { type: "string", value: "N", help: "vLLM's name for --ctx-size" },
  parallel: { type: "string", value: "N", help: "sequences decoded together per model (default 4; OLLAMA_NUM_PARALLEL on profile a)" },
  "max-num-seqs": { type: "string", value: "N", help: "vLLM's name for --parallel" },
  threads: { type: "string", value: "N", help: "decode threads, fixed (default: up to the physical cores, measured: fewer while other work holds cores)" },
  "max-queue": { type: "string", value: "N", help: "requests that may wait per model before more get 503 (default 512; OLLAMA_MAX_QUEUE on profile a)" },
  "cache-ram": { type: "string", value: "MIB", help: "host memory per model for the states of sequences handed to other requests, restored when a later prompt starts with their tokens; least recently used go first (default 8192, at most a quarter of the machine's memory; 0: off)" },
  "cache-disk": { type: "string", value: "DIR", help: "where prompt states are kept on disk, found again after a restart, an unload or a model swap (default $LLAMUX_CACHE_DISK, else <cache>/prompts: $LLAMUX_CACHE_DIR, $XDG_CACHE_HOME/llamux or ~/.cache/llamux)" },
  "cache-disk-mib": { type: "string", value: "MIB", help: "size cap of that directory for all models, least recently used go first (default 8192, at most a tenth of the disk's free space; 0: off)" },
  seed: { type: "string", value: "N", help: "accepted for vLLM compatibility (requests carry their own seeds)" },
  dtype: { type: "string", value: "TYPE", help: "accepted for vLLM compatibility; the GGUF file decides the weights' type" },
  "tensor-parallel-size": { type: "string", value: "N", help: "only 1 is supported" },
  "trust-remote-code": { type: "boolean", help: "accepted, no effect (GGUF files carry no code)" },
  mmproj: { type: "string", value: "FILE", help: "vision projector for MODEL (default: a sibling mmproj-*.gguf, if any)" },
  "sdk-port": { type: "string", value: "N", help: `profile c: also serve LM Studio's SDK sockets on 127.0.0.1:N, where LMStudioClient() without baseUrl looks (default ${SDK_DISCOVERY_PORT}; 0: off; a port in use is skipped with a log line)` },
  "allow-private-image-urls": { type: "boolean", help: "let image URLs in requests reach loopback, private and link-local addresses (refused by default: a request could probe the local network)" },
  mcp: { type: "boolean", help: "let requests use the MCP servers of ~/.llamux/mcp.json (and on profile c LM Studio's ~/.lmstudio/mcp.json too), starting them on first use (off by default: a request would make the server spawn processes)" },
  "mcp-config": { type: "string", value: "FILE", help: `like --mcp, with the servers of FILE alone, in mcp.json's format (Cursor's, LM Studio's): {"mcpServers": {NAME: {command, args, env} | {url, headers}}}; only these are ever spawned` },
  "allow-request-mcp": { type: "boolean", help: `let requests name MCP servers by URL (Responses "mcp" tools with a server_url, LM Studio's ephemeral_mcp; refused by default)` },
  "allow-private-mcp-urls": { type: "boolean", help: "let those URLs reach loopback, private and link-local addresses (refused by default: a request could probe the local network)" },
  "mcp-call-timeout": { type: "string", value: "SECONDS", help: `longest one MCP tool call may take (default ${DEFAULT_MCP_LIMITS.callTimeoutMs / 1000}); a server that takes longer gets an error result and is restarted` },
  "realtime-config": { type: "string", value: "FILE", help: "pipelines for /v1/realtime, so that a client that names only a model gets a chat model, a transcription model and a voice (docs/images-audio-speech.md, \"Realtime API\")" },
  "realtime-voice-model": { type: "string", value: "MODEL", help: "the speech model that speaks /v1/realtime replies when no preset names one" },
  "ssl-certfile": { type: "string", value: "FILE", help: "serve HTTPS (and wss:, which OpenAI's Realtime clients require) with this PEM certificate (and --ssl-keyfile)" },
  "ssl-keyfile": { type: "string", value: "FILE", help: "the PEM key of --ssl-certfile" },
  "allow-push": { type: "boolean", help: "profile a: let POST /api/push upload stored models to the registry a request names (off by default: a request could send models anywhere)" },
  ...engineFlags,
  ...speculativeFlags,
  ...loraFlags,
  ...serverOptionFlags,
  ...helpFlag,
} as const satisfies Flags;

export const servePage: HelpPage = {
  usage: ["llamux serve [MODEL] [options]"],
  description: `Serves models over HTTP. MODEL is a GGUF file path or a model in the store (pulled or created;
LLAMUX_MODELS, or OLLAMA_MODELS on profile a); a name not in the store is pulled first: on profiles b
and c an ORG/MODEL id from the Hugging Face hub (ORG/MODEL, else ORG/MODEL-GGUF), on profile a a
name from Ollama's registry (see "llamux pull --help"). Requests may also name any GGUF path or stored model.`,
  flags: serveFlags,
  environment: envVars,
};

export const serveHelp = renderHelp(servePage);

function integer(value: string | undefined, flag: string, min = 1): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${flag} must be an integer of at least ${min}, got "${value}"`);
  return n;
}

/** Flags win, then LLAMUX_HOST, then OLLAMA_HOST (a profile that reads Ollama's environment, serving alone). */
function hostAndPort(hostFlag: string | undefined, portFlag: string | undefined, alone: Profile | undefined): { host: string; port: number | undefined } {
  const [envHost, envPort] = (process.env.LLAMUX_HOST ?? "").split(":");
  const ollama = alone?.ollamaEnvironment ? ollamaHost() : undefined;
  return {
    host: hostFlag ?? (envHost || ollama?.host || "127.0.0.1"),
    port: integer(portFlag, "port") ?? integer(envPort || undefined, "port") ?? ollama?.port,
  };
}

function listenOn(app: { fetch: ListenerSetup["fetch"] }, profile: Profile, host: string, port: number, idleTimeoutSeconds: number, tls: ListenerSetup["tls"]): Server<undefined> {
  try {
    return listen({ fetch: app.fetch, profile, hostname: host, port, idleTimeoutSeconds, websocket: endpointWebSocket as WebSocketHandler<never>, ...(tls ? { tls } : {}) });
  } catch (error) {
    const inUse = (error as { code?: string }).code === "EADDRINUSE";
    throw new Error(`Cannot listen on ${host}:${port}: ${inUse ? "the port is in use (another server? choose one with --port)" : (error as Error).message}`);
  }
}

/** Loads the served model before any request asks (vLLM is not up before its model is); rejects when it cannot. */
async function preload(models: ModelService): Promise<void> {
  try {
    const engine = await models.engine(models.resolve(undefined));
    if (engine.info.compute.startsWith("running on CPU")) log.info("profile b runs the model on the CPU (vLLM itself would need a CUDA GPU)");
  } catch (error) {
    log.error((error as Error).message);
    throw error;
  }
}

/**
 * The GGUF file `serve MODEL` names: a path, a stored model (`org/repo` as vLLM names models means
 * `hf.co/org/repo`), or else a model pulled into the store now, where the profile serving alone pulls from.
 */
async function servedModelPath(model: string, alone: Profile | undefined): Promise<string> {
  if (existsSync(model)) return model;
  const store = ModelStore.open({ ollamaModels: alone?.ollamaEnvironment ?? false });
  const resolved = storedModel(store, model);
  if (resolved) return resolved.modelPath;
  if (model.endsWith(".gguf")) throw new Error(`Cannot serve model "${model}": no such file`);
  log.info(`"${model}" is not in the store at ${store.root}: pulling it`);
  // vLLM's and LM Studio's ORG/MODEL ids name hub repositories; in Ollama's registry such a name is Ollama's.
  const pulled = await pullWithProgress(model, { hubIds: alone?.pullsFrom !== "ollama-registry", store });
  const stored = store.resolve(pulled);
  if (!stored) throw new Error(`Cannot serve model "${model}": pulled as "${pulled}" but not found in the store`);
  return stored.modelPath;
}

function storedModel(store: ModelStore, model: string) {
  try {
    return store.resolve(model) ?? (/^[^/:]+\/[^/:]+(:[^/]+)?$/.test(model) ? store.resolve(`hf.co/${model}`) ?? newestHubTag(store, model) : undefined);
  } catch {
    return undefined; // not a valid model name: nothing stored under it
  }
}

/**
 * `org/repo` with no tag: the newest stored quantization of hf.co/org/repo, or of hf.co/org/repo-GGUF
 * (where a pull of the vLLM id `org/repo` finds its GGUF conversion).
 */
function newestHubTag(store: ModelStore, model: string) {
  if (model.includes(":")) return undefined;
  const [namespace, repo] = model.toLowerCase().split("/");
  const repos = [repo, `${repo}-gguf`];
  const match = store.list().find((m) => isHubName(m.parsedName) && m.parsedName.namespace.toLowerCase() === namespace && repos.includes(m.parsedName.model.toLowerCase()));
  return match ? store.resolve(match.name) : undefined;
}

/** --ssl-certfile and --ssl-keyfile (vLLM's names): both or neither, read at start. */
function tlsFiles(certFile: string | undefined, keyFile: string | undefined): ListenerSetup["tls"] {
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined) throw new UsageError("--ssl-certfile and --ssl-keyfile go together: give both to serve HTTPS");
  const read = (path: string, flag: string) => {
    try {
      return readFileSync(path, "utf8");
    } catch (error) {
      throw new UsageError(`Cannot read --${flag} "${path}": ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };
  return { cert: read(certFile, "ssl-certfile"), key: read(keyFile, "ssl-keyfile") };
}

/** --realtime-config and --realtime-voice-model: the Realtime API's pipelines, or undefined when neither is given. */
function realtimeSettings(configFile: string | undefined, voiceModel: string | undefined): RealtimeSettings | undefined {
  if (configFile !== undefined) return loadRealtimeConfig(configFile, voiceModel);
  return voiceModel !== undefined ? { presets: {}, voiceModel } : undefined;
}

export async function serveCommand(args: string[]): Promise<number | undefined> {
  const { values, positionals } = parseArgs({ args: expandLoraModules(args), allowPositionals: true, options: serveFlags });
  if (values.help) {
    console.log(serveHelp);
    return 0;
  }
  const profileName = values.profile ?? "a";
  if (!["a", "b", "c", "all"].includes(profileName)) throw new UsageError(`--profile must be a, b, c or all, got "${profileName}"`);
  const names = profileNamesOf(profileName as ProfileName | "all");
  // The one profile served, where --profile names one: some start-up rules apply only then.
  const alone = names.length === 1 ? profiles[names[0]!] : undefined;
  const { host, port } = hostAndPort(values.host, values.port, alone);
  if (profileName === "all" && values.port !== undefined) throw new UsageError("--port cannot be used with --profile all: the profiles take ports 11434, 8000 and 1234");
  if ((integer(values["tensor-parallel-size"], "tensor-parallel-size") ?? 1) > 1) {
    throw new UsageError("--tensor-parallel-size above 1 is not supported: llamux runs each model in one process");
  }
  if (values.dtype) log.info(`--dtype ${values.dtype} accepted; the GGUF file decides the weights' type`);
  // Before anything loads: a keys file that cannot be read stops the server here, with the reason.
  const namedKeys = openNamedKeys(values);
  if (namedKeys.ring.active) log.info(`${namedKeys.ring.size} named keys from ${namedKeys.ring.path}`);

  const modelArg = values.model ?? positionals[0];
  const modelPath = modelArg === undefined ? undefined : await servedModelPath(modelArg, alone);
  const contextFlag = integer(values["ctx-size"] ?? values["max-model-len"], "ctx-size");

  const engineExtras = engineFlagOptions(values);
  const speculative = speculativeFromFlags(values);
  if (speculative && modelArg === undefined) throw new UsageError("--model-draft and --speculative-config need a MODEL to speculate for");
  const toolCallParser = toolCallParserFlag(values);
  const loraSettings = loraFromFlags(values);
  if (loraSettings && modelArg === undefined) throw new UsageError("--enable-lora needs a MODEL to serve the adapters on");
  // as vLLM, an adapter of --lora-modules that is not there stops the start
  for (const { name, path } of loraSettings?.modules ?? []) {
    if (!existsSync(path)) throw new Error(`Loading lora ${name} failed: No adapter found for ${path}`);
  }
  // one registry for every listener: their engines are shared, and so are the adapters loaded into them
  const lora = loraSettings ? new LoraRegistry(loraSettings) : undefined;
  const loraUpdating = names.some((name) => profiles[name].runtimeLoraUpdating) && runtimeLoraUpdating();
  if (loraUpdating) log.warn("LoRA dynamic loading & unloading is enabled in the API server. This should ONLY be used for local development!");
  const servesOllama = names.some((name) => profiles[name].ollamaEnvironment);
  if (servesOllama && ollamaDebug() && !process.env.LLAMUX_LOG_LEVEL) process.env.LLAMUX_LOG_LEVEL = "debug";
  const manager = new ModelManager(servesOllama ? ollamaMaxLoadedModels() : undefined);
  const shutdown = new ServeShutdown(manager);
  shutdown.install();
  if (values.mmproj !== undefined && !existsSync(values.mmproj)) throw new Error(`Cannot load projector "${values.mmproj}": no such file`);
  if (values.mmproj !== undefined && modelArg === undefined) throw new UsageError("--mmproj needs a MODEL to attach the projector to");
  // A store name is served under that name, as vLLM serves `org/model` under its tag.
  const servedName = values["served-model-name"] ?? (modelPath !== modelArg ? modelArg : undefined);
  const served = modelPath
    ? [{ path: modelPath, ...(servedName ? { name: servedName } : {}), ...(values.mmproj ? { projectorPath: values.mmproj } : {}) }]
    : [];
  const imageFetch = { ...defaultImageFetchPolicy, allowPrivate: values["allow-private-image-urls"] ?? false };
  const threads = integer(values.threads, "threads");
  const cacheRamMiB = integer(values["cache-ram"], "cache-ram", 0);
  const diskMiB = integer(values["cache-disk-mib"], "cache-disk-mib", 0);
  let cacheDisk = cacheDiskSettings({ ...(values["cache-disk"] !== undefined ? { dir: values["cache-disk"] } : {}), ...(diskMiB !== undefined ? { limitMiB: diskMiB } : {}) });
  const diskRefused = cacheDisk && ensureCacheDiskDir(cacheDisk);
  if (diskRefused) {
    log.warn(`${diskRefused}; prompt states are kept in memory only`);
    cacheDisk = undefined;
  }
  const sdkPort = sdkDiscoveryPort(values["sdk-port"]);
  const tls = tlsFiles(values["ssl-certfile"], values["ssl-keyfile"]);
  const realtime = realtimeSettings(values["realtime-config"], values["realtime-voice-model"]);
  pullTimeoutMs(); // read by each pull; a bad value stops start-up here rather than failing pulls
  const mcpPolicy = {
    allowRequestServers: values["allow-request-mcp"] ?? false,
    allowPrivateUrls: values["allow-private-mcp-urls"] ?? false,
    limits: { ...DEFAULT_MCP_LIMITS, callTimeoutMs: (integer(values["mcp-call-timeout"], "mcp-call-timeout") ?? DEFAULT_MCP_LIMITS.callTimeoutMs / 1000) * 1000 },
  };
  if (mcpPolicy.allowPrivateUrls && !mcpPolicy.allowRequestServers) log.warn("--allow-private-mcp-urls has no effect without --allow-request-mcp");
  for (const name of names) {
    const profile = profiles[name];
    const ollama = profile.ollamaEnvironment;
    const flashAttention = ollama ? ollamaFlashAttention() : undefined;
    const kvCacheType = ollama ? ollamaKvCacheType() : undefined;
    const serviceOptions = {
      parallel: integer(values.parallel ?? values["max-num-seqs"], "parallel") ?? (ollama ? ollamaNumParallel() : undefined) ?? 4,
      contextPerSequence: contextFlag ?? (ollama ? ollamaContextLength() : undefined) ?? profile.defaultContext,
      // vLLM's --max-model-len is a limit; elsewhere a request that needs more context grows it
      growContext: !profile.contextFlagIsLimit || contextFlag === undefined,
      idleUnloadMs: (ollama ? ollamaKeepAliveMs() : undefined) ?? profile.idleUnloadMs,
      ...(threads !== undefined ? { threads } : {}),
      queueLimit: integer(values["max-queue"], "max-queue", 0) ?? (ollama ? ollamaMaxQueue() : undefined) ?? 512,
      ...(flashAttention ? { flashAttention } : {}),
      ...(kvCacheType ? { kvCacheType } : {}),
      ...(cacheRamMiB !== undefined ? { cacheRamMiB } : {}),
      ...(cacheDisk ? { cacheDisk: { dir: cacheDisk.dir, limitMiB: cacheDisk.limitMiB } } : {}),
      // LLAMUX_MODELS, else OLLAMA_MODELS where Ollama's environment is read, else ~/.llamux/models
      store: ModelStore.open({ ollamaModels: ollama }),
      ...engineExtras,
      ...(speculative ? { speculative } : {}),
      ...(lora ? { lora } : {}),
      ...profile.modelRules,
    };
    const service = profile.modelService(manager, served, serviceOptions);
    const models: ModelService = service.models;
    const options = serverOptionsFromFlags(values, name, host, process.env, namedKeys);
    for (const warning of exposureWarnings(options)) log.warn(`profile ${name}: ${warning}`);
    // vLLM loads its model before serving: profile b does too, and its /health says 503 until then
    const readiness = profile.loadsBeforeReady && modelArg ? new StartupReadiness() : undefined;
    // Off unless asked for: a request naming a configured server makes this process spawn it. LM Studio's
    // own mcp.json is read where llamux stands in for LM Studio.
    const mcpConfig = values.mcp || values["mcp-config"] !== undefined ? loadMcpConfig(values["mcp-config"], profile.lmStudioMcpConfig) : emptyMcpConfig();
    if (mcpConfig.servers.size) log.info(`profile ${name}: MCP servers ${[...mcpConfig.servers.keys()].join(", ")} (from ${mcpConfig.sources.join(", ")})`);
    const mcp = new McpHub(mcpConfig, mcpPolicy);
    shutdown.addHub(mcp);
    const app = createApp({
      profile, models, imageFetch, mcp, allowPush: values["allow-push"] ?? false, voicesDir: voicesDir(), ...(realtime ? { realtime } : {}), ...(toolCallParser ? { toolCallParser } : {}), ...(readiness ? { readiness } : {}),
      ...profile.metrics?.(manager, models, namedKeys.usage),
      ...(profile.runtimeLoraUpdating && loraUpdating ? { runtimeLoraUpdating: true } : {}),
    }, options);
    const listenPort = port ?? profile.defaultPort;
    shutdown.addListener(listenOn(app, profile, host, listenPort, options.idleTimeoutSeconds, tls));
    log.info(`profile ${name} (${profile.anchor}-compatible) listening on ${tls ? "https" : "http"}://${host}:${listenPort}`);
    readiness?.track(servedName ?? modelArg!, preload(models));
    // LM Studio reports a model loaded with `lms load` as loaded: so is the one named on `serve`. With
    // --profile all that waits for the first SDK listing or request: profile b already loads its own copy
    // at start (with its own context size), and two at once would double the memory at start-up.
    if (modelArg && alone) void service.loadServed?.();
    if (profile.sdkDiscovery && sdkPort !== undefined && sdkPort !== listenPort) {
      shutdown.addListener(listenForSdkDiscovery({ fetch: app.fetch, profile, port: sdkPort, websocket: endpointWebSocket as WebSocketHandler<never>, idleTimeoutSeconds: options.idleTimeoutSeconds }));
    }
  }
  if (modelArg) log.info(`serving ${modelArg}${values["served-model-name"] ? ` as "${values["served-model-name"]}"` : ""}`);
  return undefined;
}
