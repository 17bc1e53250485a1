// What each named key has used: totals (requests, prompt, completion and cached tokens, refusals for a
// limit), today's tokens (UTC), and the last minute's requests and tokens for the rpm and tpm limits. The
// totals and today's tokens are kept in a small file beside the keys file (keys.usage.json), written at
// most once per flush interval while something changed, and once more when the process exits, so a
// restart keeps them; the last minute is kept in memory only.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { z } from "zod";
import { tempPathIn, writeFileAtomic } from "../store/atomic-file.ts";
import { logger } from "../log.ts";
import { RollingWindow } from "./rolling-window.ts";

const log = logger("keys");

export interface KeyUsage {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens read from a cache instead of being processed, over all of a request's sequences. */
  cachedTokens: number;
  /** Requests refused for a limit (429). */
  rateLimited: number;
  /** The UTC day `dayTokens` counts, as YYYY-MM-DD. */
  day: string;
  /** Prompt plus completion tokens of that day. */
  dayTokens: number;
  lastUsedAt?: string;
}

export interface TokenCounts {
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
}

const storedUsageSchema = z.object({
  requests: z.number().int().min(0), prompt_tokens: z.number().int().min(0), completion_tokens: z.number().int().min(0),
  cached_tokens: z.number().int().min(0), rate_limited: z.number().int().min(0), day: z.string(), day_tokens: z.number().int().min(0),
  last_used_at: z.string().optional(),
});
const usageFileSchema = z.object({ version: z.literal(1), keys: z.record(z.string(), storedUsageSchema) });

/** How often, at most, the usage file is written while keys are in use. */
export const USAGE_FLUSH_INTERVAL_MS = 5000;

export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Seconds from `ms` to the next UTC midnight (at least 1). */
export function secondsToNextUtcDay(ms: number): number {
  const next = new Date(ms);
  next.setUTCHours(24, 0, 0, 0);
  return Math.max(1, Math.ceil((next.getTime() - ms) / 1000));
}

const blank = (day: string): KeyUsage => ({ requests: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, rateLimited: 0, day, dayTokens: 0 });

export interface UsageBookOptions {
  /** Where usage persists; unset: in memory only. */
  path?: string;
  flushIntervalMs?: number;
  now?: () => number;
}

export class UsageBook {
  private readonly usage = new Map<string, KeyUsage>();
  private readonly minuteRequests = new Map<string, RollingWindow>();
  private readonly minuteTokens = new Map<string, RollingWindow>();
  private readonly path: string | undefined;
  private readonly flushIntervalMs: number;
  readonly now: () => number;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private dirty = false;

  constructor(options: UsageBookOptions = {}) {
    this.path = options.path;
    this.flushIntervalMs = options.flushIntervalMs ?? USAGE_FLUSH_INTERVAL_MS;
    this.now = options.now ?? Date.now;
    if (this.path) this.load(this.path);
  }

  /** The owners with any usage, in name order. */
  owners(): string[] {
    return [...this.usage.keys()].sort();
  }

  /** The owner's usage, today's tokens starting at 0 on a new UTC day. */
  get(owner: string): KeyUsage {
    const today = utcDay(this.now());
    const usage = this.usage.get(owner);
    if (!usage) return blank(today);
    return usage.day === today ? { ...usage } : { ...usage, day: today, dayTokens: 0 };
  }

  /** Requests and tokens of the rolling last minute. */
  lastMinute(owner: string): { requests: number; tokens: number } {
    const now = this.now();
    return { requests: this.minuteRequests.get(owner)?.sum(now) ?? 0, tokens: this.minuteTokens.get(owner)?.sum(now) ?? 0 };
  }

  /** Whole seconds until the last minute's requests (or tokens) are below `limit`. */
  minuteWait(owner: string, what: "requests" | "tokens", limit: number): number {
    const window = (what === "requests" ? this.minuteRequests : this.minuteTokens).get(owner);
    return window?.secondsUntilBelow(limit, this.now()) ?? 0;
  }

  recordRequest(owner: string): void {
    const usage = this.current(owner);
    usage.requests++;
    usage.lastUsedAt = new Date(this.now()).toISOString();
    window(this.minuteRequests, owner).add(1, this.now());
    this.changed();
  }

  recordTokens(owner: string, counts: TokenCounts): void {
    const tokens = counts.promptTokens + counts.completionTokens;
    const usage = this.current(owner);
    usage.promptTokens += counts.promptTokens;
    usage.completionTokens += counts.completionTokens;
    usage.cachedTokens += counts.cachedTokens ?? 0;
    usage.dayTokens += tokens;
    if (tokens > 0) window(this.minuteTokens, owner).add(tokens, this.now());
    this.changed();
  }

  recordRateLimited(owner: string): void {
    this.current(owner).rateLimited++;
    this.changed();
  }

  /** Writes the file now if anything changed since the last write. */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.path || !this.dirty) return;
    this.dirty = false;
    try {
      await writeFileAtomic(this.path, this.serialize());
    } catch (error) {
      this.dirty = true;
      log.warn(`Cannot write key usage to "${this.path}": ${(error as Error).message}`);
    }
  }

  /** The last write, as the process exits (no await possible there). */
  flushSync(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.path || !this.dirty) return;
    this.dirty = false;
    const temp = tempPathIn(dirname(this.path));
    try {
      writeFileSync(temp, this.serialize(), { mode: 0o600 });
      renameSync(temp, this.path);
    } catch (error) {
      log.warn(`Cannot write key usage to "${this.path}": ${(error as Error).message}`);
    }
  }

  private current(owner: string): KeyUsage {
    const today = utcDay(this.now());
    let usage = this.usage.get(owner);
    if (!usage) this.usage.set(owner, (usage = blank(today)));
    if (usage.day !== today) {
      usage.day = today;
      usage.dayTokens = 0;
    }
    return usage;
  }

  private changed(): void {
    this.dirty = true;
    if (!this.path || this.timer) return;
    this.timer = setTimeout(() => void this.flush(), this.flushIntervalMs);
    this.timer.unref?.();
  }

  private serialize(): string {
    const keys: Record<string, z.infer<typeof storedUsageSchema>> = {};
    for (const [owner, u] of this.usage) {
      keys[owner] = {
        requests: u.requests, prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, cached_tokens: u.cachedTokens,
        rate_limited: u.rateLimited, day: u.day, day_tokens: u.dayTokens, ...(u.lastUsedAt ? { last_used_at: u.lastUsedAt } : {}),
      };
    }
    return `${JSON.stringify({ version: 1, keys }, null, 2)}\n`;
  }

  private load(path: string): void {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") log.warn(`Cannot read key usage "${path}": ${(error as Error).message}; counting from zero`);
      return;
    }
    const parsed = (() => {
      try {
        return usageFileSchema.safeParse(JSON.parse(text));
      } catch {
        return undefined;
      }
    })();
    if (!parsed?.success) {
      log.warn(`Cannot read key usage "${path}": not a usage file; counting from zero (it is replaced at the next write)`);
      return;
    }
    for (const [owner, u] of Object.entries(parsed.data.keys)) {
      this.usage.set(owner, {
        requests: u.requests, promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens, cachedTokens: u.cached_tokens,
        rateLimited: u.rate_limited, day: u.day, dayTokens: u.day_tokens, ...(u.last_used_at ? { lastUsedAt: u.last_used_at } : {}),
      });
    }
  }
}

function window(windows: Map<string, RollingWindow>, owner: string): RollingWindow {
  let found = windows.get(owner);
  if (!found) windows.set(owner, (found = new RollingWindow()));
  return found;
}

/** Reads a usage file as `llamux keys usage` shows it (no writes). */
export function readUsageFile(path: string, now = Date.now): UsageBook {
  return new UsageBook({ path, now, flushIntervalMs: Number.MAX_SAFE_INTEGER });
}
