// GET /version: the vLLM version llamux answers as, since clients gate features on it, plus its own.
import type { Context } from "hono";
import { llamuxVersion } from "../../version.ts";

/** The vLLM release whose API profile b follows (reference/vllm.md). */
export const VLLM_COMPATIBLE_VERSION = "0.19.0";

export function version() {
  return function versionHandler(c: Context) {
    return c.json({ version: VLLM_COMPATIBLE_VERSION, llamux_version: llamuxVersion });
  };
}
