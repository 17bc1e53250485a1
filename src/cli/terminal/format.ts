// Numbers and times as Ollama's CLI prints them (its format package): decimal byte units, "2 weeks ago",
// "4 minutes from now", "Forever".

const UNITS: Array<[number, string]> = [[1e12, "TB"], [1e9, "GB"], [1e6, "MB"], [1e3, "KB"]];

/** `2.0 GB`, `638 MB`, `12 KB`, `512 B`: one decimal below 10 when the value is not whole. */
export function humanBytes(bytes: number): string {
  const unit = UNITS.find(([size]) => bytes >= size);
  if (!unit) return `${Math.round(bytes)} B`;
  const value = bytes / unit[0];
  if (value >= 10 || Number.isInteger(value)) return `${Math.floor(value)} ${unit[1]}`;
  return `${value.toFixed(1)} ${unit[1]}`;
}

/** A duration in words: `Less than a second`, `5 seconds`, `About a minute`, `3 hours`, `2 weeks`. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 1) return "Less than a second";
  if (seconds === 1) return "1 second";
  if (seconds < 60) return `${seconds} seconds`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes === 1) return "About a minute";
  if (minutes < 60) return `${minutes} minutes`;
  const hours = Math.round(ms / 3_600_000);
  if (hours === 1) return "About an hour";
  if (hours < 48) return `${hours} hours`;
  if (hours < 24 * 7 * 2) return `${Math.floor(hours / 24)} days`;
  if (hours < 24 * 30 * 2) return `${Math.floor(hours / 24 / 7)} weeks`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24 / 30)} months`;
  return `${Math.floor(ms / 3_600_000 / 24 / 365)} years`;
}

/** `2 weeks ago`, `4 minutes from now`, or `Forever` for a time decades ahead (keep_alive < 0). */
export function humanTime(time: Date, now = Date.now()): string {
  const delta = now - time.getTime();
  if (delta < -20 * 365 * 24 * 3_600_000) return "Forever";
  if (delta < 0) return `${humanDuration(-delta)} from now`;
  return `${humanDuration(delta)} ago`;
}

/** Seconds left as the progress bar shows them: `45s`, `3m12s`, `1h2m`. */
export function shortDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60}s`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
}
