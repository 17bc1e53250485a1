// Search: find GGUF repositories on the hub, see each one's quantizations with sizes, download one in the
// background with a live progress bar.
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { getJson, postJson } from "./api.ts";
import type { ModelsState } from "./app.ts";
import { downloadError, downloadProgress, useDownloads } from "./downloads.ts";
import { formatBytes } from "./format.ts";
import type { DownloadStatus, HubModel, HubQuantization, HubRepo } from "./types.ts";

function quantizationNote(q: HubQuantization): string {
  const name = q.quantization.toUpperCase();
  if (q.recommended) return "Recommended: a good balance of size, speed and quality";
  if (/^I?Q[1-3]/.test(name)) return "Smallest and fastest, noticeably lower quality";
  if (/^I?Q4/.test(name)) return "Small and fast";
  if (/^Q5/.test(name)) return "Larger, a little better quality";
  if (/^Q[68]/.test(name)) return "Better quality, larger and slower";
  if (/F16|F32|BF16/.test(name)) return "Full precision: largest and slowest";
  return "";
}

export function SearchTab(props: { models: ModelsState }) {
  const [query, setQuery] = useState("");
  const [results, setResults] = useState<HubModel[] | undefined>();
  const [repo, setRepo] = useState<HubRepo | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const { downloads, track, dismiss } = useDownloads(() => void props.models.refresh());

  const search = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setRepo(undefined);
    try {
      setResults((await getJson<{ models: HubModel[] }>(`/api/v1/hub/search?q=${encodeURIComponent(query)}`)).models);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const open = async (id: string) => {
    setError(undefined);
    try {
      setRepo(await getJson<HubRepo>(`/api/v1/hub/repo?id=${encodeURIComponent(id)}`));
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const download = async (q: HubQuantization) => {
    if (!repo) return;
    setError(undefined);
    try {
      const job = await postJson<DownloadStatus>("/api/v1/models/download", { model: repo.id, quantization: q.quantization });
      track(job.job_id, `${repo.id} ${q.quantization}`);
      if (job.status === "already_downloaded" || job.status === "completed") void props.models.refresh();
    } catch (e) {
      setError((e as Error).message);
    }
  };

  return html`
    <div class="panel">
      <h2>Search the hub</h2>
      <form class="row" onSubmit=${search} role="search">
        <label class="grow">Model name <input type="search" name="q" value=${query} placeholder="e.g. LFM2 GGUF"
          onInput=${(e: Event) => setQuery((e.target as HTMLInputElement).value)} /></label>
        <button class="primary" type="submit" disabled=${busy}>${busy ? "Searching…" : "Search"}</button>
      </form>
      ${error && html`<p class="error" role="alert">${error}</p>`}
    </div>
    ${downloads.length > 0 && html`<div class="panel" aria-live="polite">
      <h2>Downloads</h2>
      <ul class="plain">${downloads.map((d) => {
        const progress = downloadProgress(d);
        const failure = downloadError(d);
        const s = d.status;
        return html`<li class="download" data-job=${d.jobId} style="margin-bottom: .75rem">
          <div class="row" style="justify-content: space-between"><strong>${d.label}</strong>
            <span class="muted">${failure ? html`<span class="error">${failure}</span>` : `${s?.status === "downloading" && progress >= 0.99 ? "verifying" : s?.status ?? "starting"} · ${Math.round(progress * 100)}%`}
              ${s?.total_size_bytes ? ` · ${formatBytes(s.downloaded_bytes ?? 0)} of ${formatBytes(s.total_size_bytes)}` : ""}
              ${s?.bytes_per_second && s.status === "downloading" ? ` · ${formatBytes(s.bytes_per_second)}/s` : ""}</span>
            ${(progress >= 1 || failure) && html`<button onClick=${() => dismiss(d.jobId)} aria-label=${`Dismiss ${d.label}`}>Dismiss</button>`}</div>
          <progress max="100" value=${Math.round(progress * 100)} aria-label=${`Download of ${d.label}`}></progress>
        </li>`;
      })}</ul>
    </div>`}
    <div class="grid2">
      ${results && html`<div class="panel">
        <h2>Results</h2>
        ${results.length === 0 ? html`<p class="muted">No GGUF repositories match.</p>` : html`<ul class="plain results">${results.map((m) => html`<li>
          <button class="link" onClick=${() => open(m.id)} aria-pressed=${repo?.id === m.id}>${m.id}</button>
          ${m.downloads !== null && html`<span class="muted"> ${m.downloads} downloads</span>`}
        </li>`)}</ul>`}
      </div>`}
      ${repo && html`<div class="panel">
        <h2>${repo.id}</h2>
        <p class="muted">Q4 quantizations are smaller and faster; Q6 and Q8 keep more quality.${repo.projector ? " Includes a vision projector." : ""}</p>
        ${repo.quantizations.length === 0 ? html`<p>No GGUF files in this repository.</p>` : html`<div class="table-wrap"><table>
          <thead><tr><th>Quantization</th><th>Size</th><th class="optional">Notes</th><th><span class="sr-only">Action</span></th></tr></thead>
          <tbody>${repo.quantizations.map((q) => html`<tr>
            <td><strong>${q.quantization}</strong> ${q.recommended && html`<span class="badge accent">Recommended</span>`}</td>
            <td class="nowrap">${formatBytes(q.size_bytes)}</td>
            <td class="optional muted">${quantizationNote(q)}</td>
            <td><button class=${q.recommended ? "primary" : ""} onClick=${() => download(q)} aria-label=${`Download ${q.quantization}`}>Download</button></td>
          </tr>`)}</tbody></table></div>`}
      </div>`}
    </div>
  `;
}
