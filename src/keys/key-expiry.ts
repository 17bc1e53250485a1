// `keys create --expires`: how long a key lives, as a count and a unit ("30d", "12h", "90m", "2w"), or
// the date and time it ends (an ISO 8601 date). The key is refused from then on.

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** The expiry as an ISO date; a RangeError names what was wrong. */
export function expiryFrom(text: string, now = Date.now()): string {
  const relative = /^(\d+)\s*([smhdw])$/.exec(text.trim());
  if (relative) {
    const ms = Number(relative[1]) * UNIT_MS[relative[2]!]!;
    if (ms <= 0 || !Number.isSafeInteger(ms)) throw new RangeError(`Cannot use --expires "${text}": the time must be above zero`);
    return new Date(now + ms).toISOString();
  }
  const at = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at)) throw new RangeError(`Cannot use --expires "${text}": expected a count and a unit (30d, 12h, 90m, 2w) or an ISO date`);
  if (at <= now) throw new RangeError(`Cannot use --expires "${text}": that date has passed`);
  return new Date(at).toISOString();
}
