// Loading, unloading and deleting a model, and the load settings form both the My Models and the
// Developer tab show (context length, GPU layers).
import { html } from "htm/preact";
import { getJson, postJson } from "./api.ts";
import type { ModelEntry } from "./types.ts";

export interface LoadSettings {
  /** Tokens of context; empty: the server's default. */
  contextLength: string;
  /** "" (the server's default), "off", "max" or a layer count. */
  gpuLayers: string;
}

export const defaultLoadSettings: LoadSettings = { contextLength: "", gpuLayers: "" };

/** POST /api/v1/models/load with LM Studio's fields, plus the GPU layer count llamux adds. */
export async function loadModel(model: ModelEntry, settings: LoadSettings): Promise<void> {
  const body: Record<string, unknown> = { model: model.key };
  if (settings.contextLength) body.context_length = Number(settings.contextLength);
  if (settings.gpuLayers === "off") body.gpu_layers = 0;
  else if (settings.gpuLayers === "max") body.gpu_layers = -1;
  else if (settings.gpuLayers) body.gpu_layers = Number(settings.gpuLayers);
  await postJson("/api/v1/models/load", body);
}

const UNLOAD_WAIT_MS = 30_000;

/** Unloads every instance, then waits until the server lists none: an instance still finishing a request goes once it is idle. */
export async function unloadModel(model: ModelEntry): Promise<void> {
  for (const instance of model.loaded_instances ?? []) await postJson("/api/v1/models/unload", { instance_id: instance.id });
  const deadline = Date.now() + UNLOAD_WAIT_MS;
  while (Date.now() < deadline) {
    const { models } = await getJson<{ models: ModelEntry[] }>("/api/v1/models");
    if (!models.some((m) => m.key === model.key && (m.loaded_instances?.length ?? 0) > 0)) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export async function deleteModel(model: ModelEntry): Promise<void> {
  await postJson("/api/v1/models/delete", { model: model.key });
}

export function LoadSettingsFields(props: { idPrefix: string; settings: LoadSettings; maxContext?: number | undefined; onChange: (settings: LoadSettings) => void }) {
  const { settings, onChange } = props;
  return html`
    <label for=${`${props.idPrefix}-ctx`}>Context length
      <input id=${`${props.idPrefix}-ctx`} type="number" min="128" step="128" max=${props.maxContext} placeholder="default" value=${settings.contextLength}
        onInput=${(e: Event) => onChange({ ...settings, contextLength: (e.target as HTMLInputElement).value })} /></label>
    <label for=${`${props.idPrefix}-gpu`}>GPU layers
      <select id=${`${props.idPrefix}-gpu`} value=${/^\d+$/.test(settings.gpuLayers) ? "count" : settings.gpuLayers}
        onChange=${(e: Event) => {
          const value = (e.target as HTMLSelectElement).value;
          onChange({ ...settings, gpuLayers: value === "count" ? "16" : value });
        }}>
        <option value="">Server default</option>
        <option value="max">All (max)</option>
        <option value="off">None (CPU only)</option>
        <option value="count">Layer count…</option>
      </select></label>
    ${/^\d+$/.test(settings.gpuLayers) && html`<label for=${`${props.idPrefix}-layers`}>Layers on GPU
      <input id=${`${props.idPrefix}-layers`} type="number" min="0" value=${settings.gpuLayers}
        onInput=${(e: Event) => onChange({ ...settings, gpuLayers: (e.target as HTMLInputElement).value || "0" })} /></label>`}
  `;
}
