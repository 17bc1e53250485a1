// The KV-cache event publisher an engine opens for --kv-events-config: its notifications become event
// batches, each sent as vLLM's three frames (topic, 8-byte big-endian sequence number, msgpack batch).
import { DEFAULT_HASH_SEED } from "./block-hash.ts";
import { KvCacheEvents } from "./kv-cache-events.ts";
import type { KvEventsConfig } from "./kv-events-config.ts";
import { ZmtpPublisher } from "./zmtp-publisher.ts";

export interface KvEventPublisher {
  /** What the scheduler calls (see KvCacheNotifications). */
  events: KvCacheEvents;
  /** The bound TCP port, when bound on TCP. */
  port: number | undefined;
  close(): void;
}

/** The seed of NONE_HASH: PYTHONHASHSEED as vLLM reads it, else vLLM's fixed default. */
export function hashSeed(env: Record<string, string | undefined> = process.env): string {
  return env.PYTHONHASHSEED ?? DEFAULT_HASH_SEED;
}

export async function openKvEventPublisher(config: KvEventsConfig, seed = hashSeed()): Promise<KvEventPublisher> {
  const socket = await ZmtpPublisher.open(config.endpoint);
  const topic = new TextEncoder().encode(config.topic);
  let sequence = 0n;
  const events = new KvCacheEvents((payload) => {
    const number = new Uint8Array(8);
    new DataView(number.buffer).setBigUint64(0, sequence++);
    socket.send([topic, number, payload]);
  }, seed);
  return {
    events,
    port: socket.port,
    close() {
      events.flush();
      socket.close();
    },
  };
}
