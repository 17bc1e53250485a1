// Reads figures from a server's Prometheus /metrics (llamux profile b), summed over the lines that match.

/** The sum of `name`'s samples whose labels include every `labels` pair (`tier="disk"`), from /metrics text. */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.slice(name.length, line.lastIndexOf(" "));
    if (wanted.every((pair) => labelText.includes(pair))) sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

export async function readMetric(baseUrl: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (!response.ok) throw new Error(`${baseUrl}/metrics answered ${response.status}`);
  return metricSum(await response.text(), name, labels);
}
