// LM Studio's `ttl` (seconds) on a generation or embedding request sets the idle time-to-live of the
// model only when that request loads it; profiles without it ignore the field.
import { z } from "zod";
import type { KeepAliveRequest } from "./model-service.ts";
import type { Profile } from "./profiles/profile.ts";

export const ttlField = z.number().int().min(1).nullable().optional().describe("LM Studio: seconds a model this request loads may stay idle");

export function ttlKeepAlive(profile: Profile, ttl: number | null | undefined): KeepAliveRequest | undefined {
  if (!profile.ttlOnLoad || ttl == null) return undefined;
  return { ms: ttl * 1000, policy: "on-load" };
}
