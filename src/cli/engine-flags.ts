// vLLM's model flags that shape how an engine loads: --chat-template, --gpu-memory-utilization, and the
// tool and reasoning parser choices.
import { existsSync, readFileSync } from "node:fs";
import type { ModelServiceOptions } from "../server/model-service.ts";
import { UsageError } from "../usage-error.ts";
import { logger } from "../log.ts";
import { rpcJoinTimeoutMs, rpcProbeTimeoutMs, rpcServerList, rpcServers } from "../config.ts";
import { TOOL_CALL_PARSER_NAMES, type ToolCallParserName } from "../generation/chat-output.ts";
import { parseKvEventsConfig } from "../engine/kv-events/kv-events-config.ts";
import type { Flags } from "./help-layout.ts";

const log = logger("serve");

/** The flags, as parseArgs reads them and --help shows them. */
export const engineFlags = {
  "chat-template": { type: "string", value: "T", help: "a Jinja chat template, or a file holding one, used instead of the model's" },
  "gpu-memory-utilization": { type: "string", value: "F", help: "share (0-1] of free GPU memory the model's layers may fill; without a GPU the model runs on the CPU" },
  rpc: { type: "string", value: "HOST:PORT[,...]", help: "run part of each model's layers on these `llamux rpc-server`s (llama.cpp's RPC back end; trusted networks only) (env LLAMUX_RPC_SERVERS)" },
  "tool-call-parser": { type: "string", value: "NAME", help: "how replies write tool calls: lfm2 (<|tool_call_start|>[f(a=1)]<|tool_call_end|>), pythonic (a bare [f(a=1)] list), hermes (<tool_call>{json}</tool_call>), or none (read no calls); default: the syntax the chat template shows, else hermes" },
  "kv-events-config": { type: "string", value: "JSON", help: `publish KV-cache events in vLLM's format over ZeroMQ for prefix-aware routers (llm-d, Dynamo): '{"enable_kv_cache_events": true, "publisher": "zmq", "endpoint": "tcp://*:5557", "topic": "kv@pod"}'; attention-only models; one model per server (each binds the endpoint)` },
  "enable-auto-tool-choice": { type: "boolean", help: `accepted for vLLM compatibility: tool_choice "auto" is always on` },
  "reasoning-parser": { type: "string", value: "NAME", help: "accepted for vLLM compatibility: <think>…</think> reasoning is always split off" },
} as const satisfies Flags;

interface EngineFlagValues {
  "chat-template"?: string;
  "gpu-memory-utilization"?: string;
  "enable-auto-tool-choice"?: boolean;
  "tool-call-parser"?: string;
  "reasoning-parser"?: string;
  rpc?: string;
  "kv-events-config"?: string;
}

export function engineFlagOptions(values: EngineFlagValues): Pick<ModelServiceOptions, "chatTemplate" | "gpuMemoryFraction" | "rpcServers" | "kvEvents"> {
  const out: Pick<ModelServiceOptions, "chatTemplate" | "gpuMemoryFraction" | "rpcServers" | "kvEvents"> = {};
  const kvEvents = values["kv-events-config"] !== undefined ? parseKvEventsConfig(values["kv-events-config"]) : undefined;
  if (kvEvents) out.kvEvents = kvEvents;
  const rpc = values.rpc !== undefined ? rpcServerList(values.rpc, "--rpc") : rpcServers();
  if (rpc?.length) {
    out.rpcServers = rpc;
    // read by each load; a bad value stops start-up here rather than failing loads
    rpcProbeTimeoutMs();
    rpcJoinTimeoutMs();
  }
  const template = values["chat-template"];
  if (template !== undefined) out.chatTemplate = existsSync(template) ? readFileSync(template, "utf8") : template;
  const fraction = values["gpu-memory-utilization"];
  if (fraction !== undefined) {
    const f = Number(fraction);
    if (!(f > 0 && f <= 1)) throw new UsageError(`--gpu-memory-utilization must be in (0, 1], got "${fraction}"`);
    out.gpuMemoryFraction = f;
  }
  if (values["reasoning-parser"] !== undefined) log.info(`--reasoning-parser ${values["reasoning-parser"]} accepted: <think> reasoning is split off for every model`);
  return out;
}

/** --tool-call-parser, checked against the syntaxes llamux reads. */
export function toolCallParserFlag(values: EngineFlagValues): ToolCallParserName | undefined {
  const name = values["tool-call-parser"];
  if (name === undefined) return undefined;
  if (!(TOOL_CALL_PARSER_NAMES as readonly string[]).includes(name)) {
    throw new UsageError(`--tool-call-parser must be one of ${TOOL_CALL_PARSER_NAMES.join(", ")}, got "${name}"`);
  }
  return name as ToolCallParserName;
}
