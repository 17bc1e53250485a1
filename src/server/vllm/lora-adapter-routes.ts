// POST /v1/load_lora_adapter and /v1/unload_lora_adapter, as vLLM mounts them with
// VLLM_ALLOW_RUNTIME_LORA_UPDATING: a body of {lora_name, lora_path, load_inplace} or {lora_name}, a 200
// whose body is vLLM's sentence, or vLLM's error (served-adapters.ts).
import type { Context } from "hono";
import { z } from "zod";
import type { ServerDeps } from "../deps.ts";
import { readJsonBody, validate } from "../validation.ts";

const loadSchema = z.object({
  lora_name: z.string().max(256).optional().describe("the name requests use as their model"),
  lora_path: z.string().max(4096).optional().describe("the adapter's GGUF file, on the server's disk"),
  load_inplace: z.boolean().optional().describe("replace an adapter loaded under the same name"),
});

const unloadSchema = z.object({
  lora_name: z.string().max(256).optional().describe("the adapter to unload"),
  lora_int_id: z.number().int().optional().describe("vLLM's adapter id: accepted, the name decides"),
});

export function loadLoraAdapter(deps: ServerDeps) {
  return async function loadLoraAdapterHandler(c: Context) {
    const body = validate(loadSchema, await readJsonBody(c));
    return c.text(await deps.models.loadAdapter(body), 200);
  };
}

export function unloadLoraAdapter(deps: ServerDeps) {
  return async function unloadLoraAdapterHandler(c: Context) {
    const body = validate(unloadSchema, await readJsonBody(c));
    return c.text(await deps.models.unloadAdapter(body), 200);
  };
}
