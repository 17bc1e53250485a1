// Developer: start and stop serving a model, the server's address, port, API-key and GPU state, the key's
// usage, copyable example requests, and a live log of the key's requests with timing and tokens per second.
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { getJson, storeApiKey, storedApiKey } from "./api.ts";
import type { ModelsState } from "./app.ts";
import { formatRate, formatTime } from "./format.ts";
import { LoadSettingsFields, defaultLoadSettings, loadModel, unloadModel, type LoadSettings } from "./model-actions.ts";
import { isLoaded, modelLabel, type LoggedRequest, type ServerStatus } from "./types.ts";
import { UsagePanel } from "./usage-panel.ts";
import { usePolling } from "./polling.ts";

const LOG_POLL_MS = 1000;
const LOG_LIMIT = 100;

function CopyBlock(props: { label: string; text: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text);
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    } catch {
      setCopied(false);
    }
  };
  return html`<div>
    <div class="row" style="justify-content: space-between"><h3>${props.label}</h3>
      <button onClick=${copy} aria-label=${`Copy the ${props.label} example`}>${copied ? "Copied" : "Copy"}</button></div>
    <pre><code>${props.text}</code></pre>
  </div>`;
}

function examples(origin: string, model: string, keyRequired: boolean) {
  const key = keyRequired ? "$LLAMUX_API_KEY" : "not-needed";
  const curl = `curl ${origin}/v1/chat/completions \\
  -H "Content-Type: application/json" \\${keyRequired ? `\n  -H "Authorization: Bearer ${key}" \\` : ""}
  -d '{
    "model": "${model}",
    "messages": [{"role": "user", "content": "Hello!"}],
    "stream": false
  }'`;
  const openai = `import OpenAI from "openai";

const client = new OpenAI({ baseURL: "${origin}/v1", apiKey: ${keyRequired ? "process.env.LLAMUX_API_KEY" : '"not-needed"'} });
const reply = await client.chat.completions.create({
  model: "${model}",
  messages: [{ role: "user", content: "Hello!" }],
});
console.log(reply.choices[0].message.content);`;
  const python = `${keyRequired ? "import os\n" : ""}from openai import OpenAI

client = OpenAI(base_url="${origin}/v1", api_key=${keyRequired ? 'os.environ["LLAMUX_API_KEY"]' : '"not-needed"'})
reply = client.chat.completions.create(
    model="${model}",
    messages=[{"role": "user", "content": "Hello!"}],
)
print(reply.choices[0].message.content)`;
  return { curl, openai, python };
}

function useRequestLog(active: boolean): LoggedRequest[] {
  const [entries, setEntries] = useState<LoggedRequest[]>([]);
  usePolling(active, LOG_POLL_MS, () => {
    let after = entries.at(-1)?.id ?? 0;
    return async () => {
      const { requests } = await getJson<{ requests: LoggedRequest[] }>(`/api/v1/server/requests?after=${after}`);
      if (requests.length > 0) {
        after = requests.at(-1)!.id;
        setEntries((old) => [...old, ...requests].slice(-LOG_LIMIT));
      }
    };
  });
  return entries;
}

export function DeveloperTab(props: { models: ModelsState; active: boolean }) {
  const { models, refresh } = props.models;
  const [status, setStatus] = useState<ServerStatus>();
  const [selected, setSelected] = useState("");
  const [settings, setSettings] = useState<LoadSettings>(defaultLoadSettings);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const log = useRequestLog(props.active);
  // Successful GETs are mostly listings (this page polls them too); hidden unless asked for.
  const [showGets, setShowGets] = useState(false);
  const shownLog = showGets ? log : log.filter((r) => r.method !== "GET" || r.status >= 400);

  const refreshStatus = async () => {
    try {
      setStatus(await getJson<ServerStatus>("/api/v1/server/status"));
    } catch (e) {
      setError((e as Error).message);
    }
  };
  useEffect(() => {
    if (props.active) void refreshStatus();
  }, [props.active, models]);

  const llms = models.filter((m) => m.type !== "embedding" && m.type !== "embeddings");
  const model = llms.find((m) => m.key === selected) ?? llms.find(isLoaded) ?? llms[0];
  const serving = model !== undefined && isLoaded(model);

  const toggle = async () => {
    if (!model) return;
    // Keep this model chosen: the default choice (the first loaded) would move once it is unloaded.
    setSelected(model.key);
    setBusy(true);
    setError(undefined);
    try {
      if (serving) await unloadModel(model);
      else await loadModel(model, settings);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
      await refresh();
      await refreshStatus();
    }
  };

  const origin = location.origin;
  const ex = examples(origin, model?.key ?? "MODEL", status?.api_key_required ?? false);
  return html`
    <div class="grid2">
      <div class="panel">
        <h2>Serve a model</h2>
        <div class="row">
          <label for="dev-model" class="grow">Model
            <select id="dev-model" value=${model?.key ?? ""} onChange=${(e: Event) => setSelected((e.target as HTMLSelectElement).value)}>
              ${llms.length === 0 && html`<option value="">No models installed</option>`}
              ${llms.map((m) => html`<option value=${m.key}>${modelLabel(m)}${isLoaded(m) ? " (loaded)" : ""}</option>`)}
            </select></label>
          <${LoadSettingsFields} idPrefix="dev" settings=${settings} maxContext=${model?.max_context_length} onChange=${setSettings} />
        </div>
        <div class="row" style="margin-top: .75rem">
          <button class=${serving ? "danger" : "primary"} onClick=${toggle} disabled=${!model || busy}>${busy ? "Working…" : serving ? "Stop serving" : "Start serving"}</button>
          <span aria-live="polite" class=${serving ? "ok" : "muted"}>${model ? (serving ? `${model.key} is loaded and serving` : `${model.key} is not loaded`) : ""}</span>
        </div>
        ${error && html`<p class="error" role="alert">${error}</p>`}
      </div>
      <div class="panel">
        <h2>Server</h2>
        ${status ? html`<dl class="server-info">
          <div><dt>Address</dt><dd><code>${origin}</code> (bound to ${status.host})</dd></div>
          <div><dt>Port</dt><dd>${status.port}</dd></div>
          <div><dt>Profile</dt><dd>${status.profile} (${status.anchor})</dd></div>
          <div><dt>API key</dt><dd>${status.api_key_required ? html`required${storedApiKey() ? " (saved in this browser)" : ""} <button onClick=${() => { storeApiKey(""); location.reload(); }}>Forget key</button>` : "not required"}</dd></div>
          <div><dt>Runtime</dt><dd>llama.cpp ${status.runtime ?? "(build unknown)"}</dd></div>
          <div><dt>GPU</dt><dd>${status.loaded.length === 0 ? "shown once a model is loaded; set GPU layers per load" : status.loaded.map((l) => html`<div>${l.model}: ${l.compute}${l.gpu_layers !== null ? `, ${l.gpu_layers} GPU layers` : ""}, context ${l.context_length} × ${l.sequences}</div>`)}</dd></div>
          <div><dt>Version</dt><dd>llamux ${status.version}</dd></div>
        </dl>` : html`<p class="muted">Loading…</p>`}
      </div>
    </div>
    <${UsagePanel} active=${props.active && (status?.api_key_required ?? false)} />
    <div class="panel">
      <h2>Example requests</h2>
      <${CopyBlock} label="curl" text=${ex.curl} />
      <${CopyBlock} label="openai (JavaScript)" text=${ex.openai} />
      <${CopyBlock} label="openai (Python)" text=${ex.python} />
    </div>
    <div class="panel">
      <div class="row" style="justify-content: space-between"><h2>Request log</h2>
        <label class="inline"><input type="checkbox" checked=${showGets} onChange=${(e: Event) => setShowGets((e.target as HTMLInputElement).checked)} /> Show successful GET requests</label></div>
      ${shownLog.length === 0 ? html`<p class="muted">No requests yet.</p>` : html`<div class="table-wrap"><table>
        <thead><tr><th class="optional">Time</th><th>Request</th><th>Status</th><th>Duration</th><th class="optional">Tokens in / out</th><th>Speed</th></tr></thead>
        <tbody>${[...shownLog].reverse().map((r) => html`<tr class="log-entry">
          <td class="optional">${formatTime(r.at)}</td><td><code>${r.method} ${r.path}</code>${r.stream && r.stream !== "completed" ? html` <span class="badge">${r.stream}</span>` : ""}</td>
          <td class=${r.status >= 400 ? "error" : ""}>${r.status}</td><td>${r.latency_ms.toFixed(0)} ms</td>
          <td class="optional">${r.prompt_tokens ?? "–"} / ${r.completion_tokens ?? "–"}</td><td>${formatRate(r.completion_tokens, r.latency_ms)}</td>
        </tr>`)}</tbody></table></div>`}
    </div>
  `;
}
