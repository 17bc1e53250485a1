// Numbers as people read them.

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return "unknown size";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : value < 10 ? 2 : 1)} ${units[unit]}`;
}

export function formatRate(tokens: number | null, ms: number): string {
  if (!tokens || ms <= 0) return "–";
  return `${(tokens / (ms / 1000)).toFixed(1)} tok/s`;
}

export function formatTime(at: number): string {
  return new Date(at).toLocaleTimeString();
}
