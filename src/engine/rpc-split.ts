// How many of a model's layers go to RPC servers: in proportion to the memory each side has free, so a
// machine with more room takes more layers. llama.cpp puts offloaded layers on the RPC devices and
// keeps the rest (and the input embeddings) on this machine's CPU.
import { freemem } from "node:os";
import { addRpcServers, rpcDeviceMemory } from "../../ffi/rpc.ts";
import { logger } from "../log.ts";

const log = logger("engine");

/**
 * Joins the RPC servers' devices and returns the layers to place on them: `requested` when given (a
 * --gpu-layers count, -1 for all), else a share by free memory (at least one, at most all).
 */
export function layersOnRpcServers(servers: readonly string[], layerCount: number, requested?: number): number {
  addRpcServers(servers);
  const remote = rpcDeviceMemory();
  if (requested !== undefined) return requested;
  const remoteFree = remote.reduce((sum, d) => sum + d.freeBytes, 0);
  const localFree = freemem();
  const share = remoteFree / (remoteFree + localFree);
  const layers = Math.min(layerCount, Math.max(1, Math.round(layerCount * share)));
  log.info(`RPC: ${layers} of ${layerCount} layers on ${remote.map((d) => d.name).join(", ")} (${gib(remoteFree)} free there, ${gib(localFree)} here); the rest on this machine`);
  return layers;
}

const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
