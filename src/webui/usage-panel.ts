// Developer tab: what the page's API key has used (GET /v1/usage), with its limits; a key with the admin
// scope sees every named key. Shown only on a server with named keys (the list is empty otherwise).
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { usePolling } from "./polling.ts";
import { getJson } from "./api.ts";
import type { KeyUsageEntry } from "./types.ts";

const USAGE_POLL_MS = 5000;

function useKeyUsage(active: boolean): KeyUsageEntry[] {
  const [entries, setEntries] = useState<KeyUsageEntry[]>([]);
  usePolling(active, USAGE_POLL_MS, () => async () => setEntries((await getJson<{ data: KeyUsageEntry[] }>("/v1/usage")).data));
  return entries;
}

const ofLimit = (used: number, limit: number | null | undefined) => (limit ? `${used} / ${limit}` : String(used));

function limitsText(entry: KeyUsageEntry): string {
  const limits = entry.limits;
  if (!limits) return "revoked";
  const parts = [
    `scopes: ${limits.scopes.join(", ") || "none"}`, limits.models ? `models: ${limits.models.join(", ")}` : "",
    limits.max_parallel ? `${limits.max_parallel} parallel` : "", limits.weight !== 1 ? `weight ${limits.weight}` : "",
    limits.expires_at ? `expires ${new Date(limits.expires_at).toLocaleString()}` : "",
  ];
  return parts.filter(Boolean).join(" · ");
}

export function UsagePanel(props: { active: boolean }) {
  const entries = useKeyUsage(props.active);
  if (entries.length === 0) return null;
  return html`<div class="panel">
    <h2>Key usage</h2>
    <div class="table-wrap"><table>
      <thead><tr><th>Key</th><th>Requests</th><th>Tokens in / out</th><th class="optional">Cached</th><th>Today</th><th>Last minute</th><th>Refused (429)</th><th class="optional">Limits</th></tr></thead>
      <tbody>${entries.map((e) => html`<tr class="key-usage">
        <td><code>${e.key}</code></td><td>${e.requests}</td><td>${e.prompt_tokens} / ${e.completion_tokens}</td>
        <td class="optional">${e.cached_tokens}</td><td>${ofLimit(e.tokens_today, e.limits?.tokens_per_day)} tokens</td>
        <td>${ofLimit(e.last_minute.requests, e.limits?.rpm)} requests, ${ofLimit(e.last_minute.tokens, e.limits?.tpm)} tokens</td>
        <td>${e.rate_limited}</td><td class="optional">${limitsText(e)}</td>
      </tr>`)}</tbody>
    </table></div>
  </div>`;
}
