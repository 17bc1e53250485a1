// vLLM's --kv-events-config: a JSON object with its KVEventsConfig fields. llamux publishes with
// "zmq" (or not at all with "null", or enable_kv_cache_events false) on `endpoint` under `topic`.
import { UsageError } from "../../usage-error.ts";
import { parseZmqEndpoint } from "./zmtp-publisher.ts";

export interface KvEventsConfig {
  endpoint: string;
  topic: string;
}

const KNOWN_FIELDS = new Set([
  "enable_kv_cache_events", "publisher", "endpoint", "replay_endpoint", "buffer_steps", "hwm", "max_queue_size", "topic",
]);

/** The publisher's settings, or undefined when events are off. Throws UsageError for a malformed config. */
export function parseKvEventsConfig(text: string): KvEventsConfig | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`--kv-events-config must be a JSON object such as '{"enable_kv_cache_events": true, "publisher": "zmq"}', got ${text}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new UsageError(`--kv-events-config must be a JSON object, got ${text}`);
  const config = parsed as Record<string, unknown>;
  for (const key of Object.keys(config)) {
    if (!KNOWN_FIELDS.has(key)) throw new UsageError(`--kv-events-config has an unknown field "${key}" (known: ${[...KNOWN_FIELDS].join(", ")})`);
  }
  const field = <T>(name: string, type: string, fallback: T): T => {
    const value = config[name];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== type) throw new UsageError(`--kv-events-config field "${name}" must be a ${type}, got ${JSON.stringify(value)}`);
    return value as T;
  };
  const enabled = field("enable_kv_cache_events", "boolean", false);
  // vLLM picks zmq when events are enabled and no publisher is named
  const publisher = field("publisher", "string", enabled ? "zmq" : "null");
  if (publisher !== "zmq" && publisher !== "null") throw new UsageError(`--kv-events-config publisher must be "zmq" or "null", got "${publisher}"`);
  if (field<string | undefined>("replay_endpoint", "string", undefined) !== undefined) {
    throw new UsageError("--kv-events-config replay_endpoint is not supported: llamux publishes without a replay buffer");
  }
  for (const name of ["buffer_steps", "hwm", "max_queue_size"]) {
    const value = field<number | undefined>(name, "number", undefined);
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) throw new UsageError(`--kv-events-config field "${name}" must be a positive integer, got ${value}`);
  }
  const endpoint = field("endpoint", "string", "tcp://*:5557");
  try {
    parseZmqEndpoint(endpoint);
  } catch (error) {
    throw new UsageError(`--kv-events-config endpoint: ${(error as Error).message}`);
  }
  const topic = field("topic", "string", "");
  if (!enabled || publisher === "null") return undefined;
  return { endpoint, topic };
}
