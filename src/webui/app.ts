// The shell: header, the four tabs (kept in the URL's hash so a reload stays put), the API-key prompt,
// and the model list every tab shares.
import { html } from "htm/preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { HttpError, getJson, onUnauthorized, storeApiKey, storedApiKey } from "./api.ts";
import { ChatTab } from "./chat-tab.ts";
import { DeveloperTab } from "./developer-tab.ts";
import { ModelsTab } from "./models-tab.ts";
import { SearchTab } from "./search-tab.ts";
import type { ModelEntry } from "./types.ts";

const TABS = [
  { id: "chat", label: "Chat" },
  { id: "search", label: "Search" },
  { id: "models", label: "My Models" },
  { id: "developer", label: "Developer" },
] as const;
type TabId = (typeof TABS)[number]["id"];

const tabFromHash = (): TabId => (TABS.find((t) => `#${t.id}` === location.hash)?.id ?? "chat");

export interface ModelsState {
  models: ModelEntry[];
  error: string | undefined;
  refresh: () => Promise<void>;
}

/** LM Studio's model list (profile c); other profiles have only OpenAI's, which names the models and no more. */
async function fetchModels(): Promise<ModelEntry[]> {
  try {
    return (await getJson<{ models?: ModelEntry[] }>("/api/v1/models")).models ?? [];
  } catch (error) {
    if (!(error instanceof HttpError && error.status === 404)) throw error;
    const { data } = await getJson<{ data: Array<{ id: string }> }>("/v1/models");
    return data.map((m) => ({ type: "llm", key: m.id }));
  }
}

function useModels(): ModelsState {
  const [models, setModels] = useState<ModelEntry[]>([]);
  const [error, setError] = useState<string>();
  const refresh = useCallback(async () => {
    try {
      setModels(await fetchModels());
      setError(undefined);
    } catch (e) {
      setError((e as Error).message);
    }
  }, []);
  useEffect(() => {
    void refresh();
  }, [refresh]);
  return { models, error, refresh };
}

function ApiKeyDialog(props: { onSaved: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [key, setKey] = useState(storedApiKey());
  useEffect(() => {
    if (!dialog.current?.open) dialog.current?.showModal();
  }, []);
  const save = (event: Event) => {
    event.preventDefault();
    storeApiKey(key.trim());
    dialog.current?.close();
    props.onSaved();
  };
  return html`<dialog ref=${dialog} aria-labelledby="key-title">
    <form onSubmit=${save}>
      <h2 id="key-title">API key needed</h2>
      <p>This server asks for an API key. It is kept in this browser only.</p>
      <label>API key <input type="password" autocomplete="off" value=${key} onInput=${(e: Event) => setKey((e.target as HTMLInputElement).value)} required /></label>
      <div class="row" style="margin-top: .75rem"><button class="primary" type="submit">Save key</button></div>
    </form>
  </dialog>`;
}

export function App() {
  const [tab, setTab] = useState<TabId>(tabFromHash());
  const [needsKey, setNeedsKey] = useState(false);
  const models = useModels();
  const tabRefs = useRef<Record<string, HTMLButtonElement | null>>({});

  useEffect(() => {
    onUnauthorized(() => setNeedsKey(true));
    const onHash = () => setTab(tabFromHash());
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);

  const select = (id: TabId, focus = false) => {
    history.replaceState(null, "", `#${id}`);
    setTab(id);
    if (focus) tabRefs.current[id]?.focus();
  };

  // Arrow keys move between tabs, as the ARIA tabs pattern expects.
  const onTabKey = (event: KeyboardEvent) => {
    const index = TABS.findIndex((t) => t.id === tab);
    const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
    if (event.key === "Home") select(TABS[0].id, true);
    else if (event.key === "End") select(TABS[TABS.length - 1]!.id, true);
    else if (step) select(TABS[(index + step + TABS.length) % TABS.length]!.id, true);
    else return;
    event.preventDefault();
  };

  const loadedCount = models.models.filter((m) => (m.loaded_instances?.length ?? 0) > 0).length;
  // Every panel stays mounted (hidden when not chosen), so a reply streams on while another tab is open.
  const panels: Record<TabId, unknown> = {
    chat: html`<${ChatTab} models=${models} />`,
    search: html`<${SearchTab} models=${models} />`,
    models: html`<${ModelsTab} models=${models} />`,
    developer: html`<${DeveloperTab} models=${models} active=${tab === "developer"} />`,
  };

  return html`
    <header class="top">
      <h1>llamux</h1>
      <div role="tablist" aria-label="Sections" onKeyDown=${onTabKey}>
        ${TABS.map((t) => html`<button role="tab" id=${`tab-${t.id}`} aria-controls=${`panel-${t.id}`} aria-selected=${tab === t.id}
          tabIndex=${tab === t.id ? 0 : -1} ref=${(el: HTMLButtonElement | null) => (tabRefs.current[t.id] = el)} onClick=${() => select(t.id)}>${t.label}</button>`)}
      </div>
      <span class="status" aria-live="polite">${models.error ? html`<span class="error">${models.error}</span>` : `${models.models.length} models, ${loadedCount} loaded`}</span>
    </header>
    <main>
      ${TABS.map((t) => html`<section id=${`panel-${t.id}`} role="tabpanel" aria-labelledby=${`tab-${t.id}`} hidden=${tab !== t.id}>${panels[t.id]}</section>`)}
    </main>
    ${needsKey && html`<${ApiKeyDialog} onSaved=${() => {
      setNeedsKey(false);
      void models.refresh();
    }} />`}
  `;
}
