// My Models: what is installed, with size, quantization, architecture, capabilities and whether it is
// loaded; load (with settings), unload, delete (after a confirmation).
import { html } from "htm/preact";
import { useRef, useState } from "preact/hooks";
import type { ModelsState } from "./app.ts";
import { formatBytes } from "./format.ts";
import { LoadSettingsFields, defaultLoadSettings, deleteModel, loadModel, unloadModel, type LoadSettings } from "./model-actions.ts";
import { isLoaded, modelLabel, type ModelEntry } from "./types.ts";

function capabilities(model: ModelEntry): string[] {
  const found = [model.type === "embedding" || model.type === "embeddings" ? "embedding" : "text"];
  if (model.capabilities?.vision) found.push("vision");
  if (model.capabilities?.trained_for_tool_use) found.push("tools");
  if (model.capabilities?.reasoning) found.push("reasoning");
  return found;
}

export function ModelsTab(props: { models: ModelsState }) {
  const { models, refresh, error: listError } = props.models;
  const [busy, setBusy] = useState<string>();
  const [error, setError] = useState<string>();
  const [settings, setSettings] = useState<LoadSettings>(defaultLoadSettings);
  const [toDelete, setToDelete] = useState<ModelEntry>();
  const dialog = useRef<HTMLDialogElement>(null);

  const act = async (model: ModelEntry, what: string, action: () => Promise<void>) => {
    setBusy(`${what} ${model.key}`);
    setError(undefined);
    try {
      await action();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(undefined);
      await refresh();
    }
  };

  const askDelete = (model: ModelEntry) => {
    setToDelete(model);
    dialog.current?.showModal();
  };
  const confirmDelete = () => {
    dialog.current?.close();
    if (toDelete) void act(toDelete, "Deleting", () => deleteModel(toDelete));
  };

  return html`
    <div class="panel">
      <div class="row" style="justify-content: space-between"><h2>My Models</h2><button onClick=${() => refresh()}>Refresh</button></div>
      <fieldset class="row" style="border: none; padding: 0; margin: 0 0 .75rem">
        <legend class="muted" style="font-size: .85rem; margin-bottom: .25rem">Load settings</legend>
        <${LoadSettingsFields} idPrefix="models" settings=${settings} onChange=${setSettings} />
      </fieldset>
      ${(error || listError) && html`<p class="error" role="alert">${error ?? listError}</p>`}
      ${busy && html`<p class="muted" aria-live="polite">${busy}…</p>`}
      ${models.length === 0 ? html`<p class="muted">No models installed yet: find one in the Search tab.</p>` : html`<div class="table-wrap"><table>
        <thead><tr><th>Model</th><th>Size</th><th class="optional">Quantization</th><th class="optional">Architecture</th><th class="optional">Capabilities</th><th>State</th><th><span class="sr-only">Actions</span></th></tr></thead>
        <tbody>${models.map((m) => html`<tr data-model=${m.key}>
          <td><strong>${modelLabel(m)}</strong>${m.display_name && m.display_name !== m.key ? html`<br /><code class="muted">${m.key}</code>` : ""}</td>
          <td class="nowrap">${formatBytes(m.size_bytes)}</td>
          <td class="optional">${m.quantization?.name ?? "–"}</td>
          <td class="optional">${m.architecture ?? "–"}${m.params_string ? ` · ${m.params_string}` : ""}</td>
          <td class="optional">${capabilities(m).map((c) => html`<span class="badge">${c}</span>`)}</td>
          <td>${isLoaded(m) ? html`<span class="ok">Loaded</span>` : html`<span class="muted">Not loaded</span>`}</td>
          <td><div class="row">
            ${isLoaded(m)
              ? html`<button onClick=${() => act(m, "Unloading", () => unloadModel(m))} aria-label=${`Unload ${m.key}`}>Unload</button>`
              : html`<button class="primary" onClick=${() => act(m, "Loading", () => loadModel(m, settings))} aria-label=${`Load ${m.key}`} disabled=${busy !== undefined}>Load</button>`}
            <button class="danger" onClick=${() => askDelete(m)} aria-label=${`Delete ${m.key}`}>Delete</button>
          </div></td>
        </tr>`)}</tbody></table></div>`}
    </div>
    <dialog ref=${dialog} aria-labelledby="delete-title" onClose=${() => setToDelete(undefined)}>
      <h2 id="delete-title">Delete model?</h2>
      <p>Delete <strong>${toDelete?.key}</strong> (${formatBytes(toDelete?.size_bytes)}) from this machine? It is unloaded first.</p>
      <div class="row"><button class="danger" onClick=${confirmDelete}>Delete</button><button autofocus onClick=${() => dialog.current?.close()}>Cancel</button></div>
    </dialog>
  `;
}
