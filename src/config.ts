// The environment variables llamux reads: one table of name, default and meaning (printed by
// `llamux serve --help`), and a named accessor per variable that reads it when called. A value that
// does not parse stops start-up with a message naming the variable, rather than being guessed at.
import { homedir } from "node:os";
import { keepAliveFromEnv } from "./duration.ts";

export type Env = Record<string, string | undefined>;

export interface EnvVar {
  name: string;
  default: string;
  description: string;
}

export const envVars: EnvVar[] = [
  { name: "LLAMUX_HOST", default: "127.0.0.1", description: "host:port for llamux serve (flags win)" },
  { name: "LLAMUX_API_KEY", default: "", description: "require this API key (VLLM_API_KEY too on profile b)" },
  { name: "LLAMUX_MODELS", default: "~/.llamux/models", description: "the model store requests can name models from (all profiles)" },
  { name: "LLAMUX_VOICES", default: "~/.llamux/voices", description: "speaker files (WAV, MP3, FLAC) a speech request names as its `voice`, beside the model's own folder" },
  { name: "LLAMUX_LOG_LEVEL", default: "info", description: "error, warn, info or debug (with llama.cpp's own log)" },
  { name: "LLAMUX_RPC_SERVERS", default: "", description: "host:port list of `llamux rpc-server`s that take part of each model's layers (--rpc wins; the way to set it for `ollama serve`)" },
  { name: "LLAMUX_RPC_PROBE_TIMEOUT", default: "5", description: "seconds llamux's check of an RPC server waits to connect and for each answer (then a 503 naming it)" },
  { name: "LLAMUX_RPC_JOIN_TIMEOUT", default: "15", description: "seconds llama.cpp's RPC back end may take to join the RPC servers after that check (then a 503)" },
  { name: "LLAMUX_PULL_TIMEOUT", default: "30", description: "seconds a pull or download waits to connect, for an answer's headers, and between two reads of its body (then it fails, or retries a blob)" },
  { name: "LLAMUX_JIT_AUTO_EVICT", default: "1", description: "profile c: a model loaded just in time unloads the one loaded just in time before it (LM Studio's Auto-Evict); 0 keeps both" },
  { name: "VLLM_ALLOW_RUNTIME_LORA_UPDATING", default: "0", description: "profile b: 1 or true mounts POST /v1/load_lora_adapter and /v1/unload_lora_adapter (with --enable-lora)" },
  { name: "OLLAMA_HOST", default: "127.0.0.1:11434", description: "profile a: address to bind, [scheme://]host[:port]" },
  { name: "OLLAMA_MODELS", default: "~/.llamux/models", description: "profile a: the model store when LLAMUX_MODELS is unset; an Ollama models directory works as is" },
  { name: "OLLAMA_KEEP_ALIVE", default: "5m", description: "profile a: idle time before a model unloads (\"10m\", seconds, <0 forever)" },
  { name: "OLLAMA_NUM_PARALLEL", default: "4", description: "profile a: sequences decoded together per model (--parallel wins)" },
  { name: "OLLAMA_MAX_LOADED_MODELS", default: "3", description: "profiles a, all: models loaded at once (then the idlest is unloaded)" },
  { name: "OLLAMA_MAX_QUEUE", default: "512", description: "profile a: requests waiting per model before more get 503" },
  { name: "OLLAMA_CONTEXT_LENGTH", default: "4096", description: "profile a: default context per sequence (num_ctx)" },
  { name: "OLLAMA_ORIGINS", default: "", description: "profile a: more browser origins CORS allows, comma-separated" },
  { name: "OLLAMA_FLASH_ATTENTION", default: "auto", description: "profile a: 1 turns flash attention on, 0 off" },
  { name: "OLLAMA_KV_CACHE_TYPE", default: "f16", description: "profile a: KV cache type, f16, q8_0 or q4_0" },
  { name: "OLLAMA_DEBUG", default: "0", description: "profile a: 1 logs at debug level (LLAMUX_LOG_LEVEL=debug)" },
];

/** Variables read outside `llamux serve`'s own table, named in the help of the commands that read them. */
export const otherEnvVars: EnvVar[] = [
  { name: "LLAMUX_LIB_DIR", default: "", description: "load llama.cpp's libraries from this directory instead of the built-in ones" },
  { name: "LLAMUX_CPU_AMX", default: "0", description: "1 loads llama.cpp's Intel AMX kernels, left out by default because they crash or compute wrong results on some shapes" },
  { name: "LLAMUX_STEP_TRACE", default: "", description: "append a line per decode step to this file: end time, generating rows, prompt tokens, step and decode ms, requests waiting" },
  { name: "LLAMUX_CACHE_DIR", default: "~/.cache/llamux", description: "where the executable extracts its libraries ($XDG_CACHE_HOME/llamux when set)" },
  { name: "LLAMUX_CACHE_DISK", default: "<cache>/prompts", description: "where servers keep prompt states on disk (--cache-disk wins); <cache> is LLAMUX_CACHE_DIR's directory" },
  { name: "XDG_CACHE_HOME", default: "~/.cache", description: "the cache directory's parent when LLAMUX_CACHE_DIR is unset" },
  { name: "LLAMUX_STATE_DIR", default: "~/.local/state/llamux", description: "where `lms server start` records its background server ($XDG_STATE_HOME/llamux when set)" },
  { name: "XDG_STATE_HOME", default: "~/.local/state", description: "the state directory's parent when LLAMUX_STATE_DIR is unset" },
  { name: "LLAMUX_PERSONA", default: "", description: "ollama, vllm or lms: behave as that tool without renaming the executable; llamux: never" },
  { name: "XDG_CONFIG_HOME", default: "~/.config", description: "`llamux serve` and `llamux keys` keep the named keys in $XDG_CONFIG_HOME/llamux/keys.json (--keys-file wins)" },
  { name: "VLLM_API_KEY", default: "", description: "profile b: require this API key (LLAMUX_API_KEY applies to every profile)" },
  { name: "HF_ENDPOINT", default: "https://huggingface.co", description: "the Hugging Face hub's address, for pulls, downloads and the web UI's search" },
  { name: "HF_TOKEN", default: "", description: "a token for gated or private repositories of the Hugging Face hub" },
  { name: "HUGGING_FACE_HUB_TOKEN", default: "", description: "the older name of HF_TOKEN, read when HF_TOKEN is unset" },
  { name: "OLLAMA_REGISTRY", default: "https://registry.ollama.ai", description: "the Ollama registry for pulls and pushes of names without a host" },
  { name: "LLAMUX_REGISTRY_KEY", default: "~/.ollama/id_ed25519", description: "the ed25519 key (OpenSSH format, Ollama's) that signs registry token requests; a push creates it when missing" },
  { name: "LLAMUX_CONTAINER_USER", default: "1000:1000", description: "the container image: the user the entry point switches to when the model cache lets it write" },
  { name: "PYTHONHASHSEED", default: "", description: "the seed of the KV-cache events' first block hash, as vLLM reads it (--kv-events-config)" },
  { name: "LLAMUX_MODELS_CACHE", default: ".models", description: "building from source: where tests, make run and make bench keep the models they generate" },
  { name: "LMS_SERVER_HOST", default: "127.0.0.1", description: "`lms server start`: address to bind (--bind wins)" },
];

/** A variable of either table by name (for a command's help); throws for one in neither. */
export function envVar(name: string): EnvVar {
  const found = envVars.find((variable) => variable.name === name) ?? otherEnvVars.find((variable) => variable.name === name);
  if (!found) throw new Error(`${name} is in neither table of src/config.ts`);
  return found;
}

/** The value with surrounding spaces and quotes removed, as Ollama reads its variables; undefined if unset or empty. */
function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim().replace(/^["']+|["']+$/g, "").trim();
  return value ? value : undefined;
}

function invalid(name: string, value: string, expected: string): Error {
  return new Error(`Cannot use ${name}="${value}": expected ${expected}`);
}

function nonNegativeInteger(env: Env, name: string): number | undefined {
  const value = read(env, name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw invalid(name, value, "a whole number of at least 0");
  return n;
}

function bool(env: Env, name: string): boolean | undefined {
  const value = read(env, name);
  if (value === undefined) return undefined;
  if (/^(1|t|true)$/i.test(value)) return true;
  if (/^(0|f|false)$/i.test(value)) return false;
  throw invalid(name, value, "1, true, 0 or false");
}

/** OLLAMA_HOST as a bind address: `host`, `host:port`, `:port`, `[::1]:port`, or with an http(s) scheme. */
export function ollamaHost(env: Env = process.env): { host?: string; port?: number } | undefined {
  const value = read(env, "OLLAMA_HOST");
  if (value === undefined) return undefined;
  const scheme = /^(https?):\/\//i.exec(value)?.[1]?.toLowerCase();
  const rest = value.replace(/^https?:\/\//i, "").replace(/\/.*$/, "");
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(rest);
  if (!match) throw invalid("OLLAMA_HOST", value, "[http://]host[:port]");
  const host = match[1]!.replace(/^\[|\]$/g, "");
  let port: number | undefined = match[2] ? Number(match[2]) : undefined;
  if (port === undefined && scheme) port = scheme === "https" ? 443 : 80;
  if (port !== undefined && !(port >= 1 && port <= 65535)) throw invalid("OLLAMA_HOST", value, "a port between 1 and 65535");
  return { ...(host ? { host } : {}), ...(port !== undefined ? { port } : {}) };
}

/** OLLAMA_KEEP_ALIVE in milliseconds (Infinity: forever), or undefined when unset. */
export function ollamaKeepAliveMs(env: Env = process.env): number | undefined {
  const value = read(env, "OLLAMA_KEEP_ALIVE");
  if (value === undefined) return undefined;
  try {
    return keepAliveFromEnv(value);
  } catch {
    throw invalid("OLLAMA_KEEP_ALIVE", value, 'a duration such as "5m", "1h" or "-1", or whole seconds');
  }
}

/** 0 means "the default", as in Ollama. */
export function ollamaNumParallel(env: Env = process.env): number | undefined {
  return nonNegativeInteger(env, "OLLAMA_NUM_PARALLEL") || undefined;
}

export function ollamaMaxLoadedModels(env: Env = process.env): number | undefined {
  return nonNegativeInteger(env, "OLLAMA_MAX_LOADED_MODELS") || undefined;
}

export function ollamaMaxQueue(env: Env = process.env): number | undefined {
  return nonNegativeInteger(env, "OLLAMA_MAX_QUEUE");
}

export function ollamaContextLength(env: Env = process.env): number | undefined {
  const n = nonNegativeInteger(env, "OLLAMA_CONTEXT_LENGTH");
  if (n !== undefined && n > 0 && n < 4) throw invalid("OLLAMA_CONTEXT_LENGTH", String(n), "0 or at least 4");
  return n || undefined;
}

export function ollamaOrigins(env: Env = process.env): string[] {
  return (read(env, "OLLAMA_ORIGINS") ?? "").split(",").map((origin) => origin.trim()).filter(Boolean);
}

export function ollamaFlashAttention(env: Env = process.env): "on" | "off" | undefined {
  const on = bool(env, "OLLAMA_FLASH_ATTENTION");
  return on === undefined ? undefined : on ? "on" : "off";
}

const kvCacheTypes = ["f16", "q8_0", "q4_0"] as const;

export function ollamaKvCacheType(env: Env = process.env): (typeof kvCacheTypes)[number] | undefined {
  const value = read(env, "OLLAMA_KV_CACHE_TYPE")?.toLowerCase();
  if (value === undefined) return undefined;
  if (!(kvCacheTypes as readonly string[]).includes(value)) throw invalid("OLLAMA_KV_CACHE_TYPE", value, kvCacheTypes.join(", "));
  return value as (typeof kvCacheTypes)[number];
}

/** OLLAMA_DEBUG: 1/true (or 2, Ollama's trace level) means debug logging. */
export function ollamaDebug(env: Env = process.env): boolean {
  const value = read(env, "OLLAMA_DEBUG");
  if (value !== undefined && /^\d+$/.test(value)) return Number(value) > 0;
  return bool(env, "OLLAMA_DEBUG") ?? false;
}

/** Profile c: LM Studio's Auto-Evict of the previous just-in-time model (on unless LLAMUX_JIT_AUTO_EVICT=0). */
export function jitAutoEvict(env: Env = process.env): boolean {
  return bool(env, "LLAMUX_JIT_AUTO_EVICT") ?? true;
}

/** A time limit given in seconds (more than 0, at most an hour), in milliseconds. */
function timeLimitMs(env: Env, name: string, defaultSeconds: number): number {
  const value = read(env, name);
  if (value === undefined) return defaultSeconds * 1000;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600) throw invalid(name, value, "seconds, more than 0 and at most 3600");
  return seconds * 1000;
}

/** LLAMUX_PULL_TIMEOUT in milliseconds: how long a pull waits on a registry or hub (default 30 s). */
export function pullTimeoutMs(env: Env = process.env): number {
  return timeLimitMs(env, "LLAMUX_PULL_TIMEOUT", 30);
}

/** LLAMUX_RPC_PROBE_TIMEOUT in milliseconds: how long llamux's check waits to connect to an RPC server, and for each answer (default 5 s). */
export function rpcProbeTimeoutMs(env: Env = process.env): number {
  return timeLimitMs(env, "LLAMUX_RPC_PROBE_TIMEOUT", 5);
}

/** LLAMUX_RPC_JOIN_TIMEOUT in milliseconds: how long llama.cpp's RPC back end may take to join the servers (default 15 s). */
export function rpcJoinTimeoutMs(env: Env = process.env): number {
  return timeLimitMs(env, "LLAMUX_RPC_JOIN_TIMEOUT", 15);
}

/** RPC servers as `host:port`, checked for shape (the connection is tried when a model loads). */
export function rpcServerList(value: string, source: string): string[] {
  const servers = value.split(",").map((s) => s.trim()).filter(Boolean);
  for (const server of servers) {
    if (!/^(\[[0-9a-fA-F:]+\]|[^\s:\/]+):\d{1,5}$/.test(server)) throw invalid(source, value, "a comma-separated list of host:port");
  }
  return servers;
}

/** LLAMUX_RPC_SERVERS: the RPC servers that take part of each model's layers. */
export function rpcServers(env: Env = process.env): string[] | undefined {
  const value = read(env, "LLAMUX_RPC_SERVERS");
  return value === undefined ? undefined : rpcServerList(value, "LLAMUX_RPC_SERVERS");
}

/** VLLM_ALLOW_RUNTIME_LORA_UPDATING as vLLM reads it: "1" or "true" in any case turns it on, anything else leaves it off. */
export function runtimeLoraUpdating(env: Env = process.env): boolean {
  return ["1", "true"].includes((env.VLLM_ALLOW_RUNTIME_LORA_UPDATING ?? "").trim().toLowerCase());
}

/** LLAMUX_VOICES: the folder of named speaker files (default ~/.llamux/voices). */
export function voicesDir(env: Env = process.env): string {
  const value = read(env, "LLAMUX_VOICES") ?? "~/.llamux/voices";
  return value.replace(/^~(?=$|\/)/, env.HOME ?? homedir());
}
