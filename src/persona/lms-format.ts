// lms's table and list output, from LM Studio's REST API model objects (GET /api/v1/models).

/** The fields of an /api/v1/models entry that lms prints (others are passed through by --json). */
export interface LmsModel {
  type: "llm" | "embedding" | string;
  key: string;
  display_name?: string;
  architecture?: string | null;
  params_string?: string | null;
  size_bytes?: number;
  path?: string;
  loaded_instances?: Array<{ id: string; config?: { context_length?: number } }>;
}

/** Decimal units, as LM Studio shows sizes: "1.12 GB", "84.11 MB". */
export function formatSize(bytes: number | undefined): string {
  if (bytes === undefined) return "";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(2)} ${units[unit]}`;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]! + 4))).join("").trimEnd()).join("\n");
}

/** `lms ls`: a summary line, then one table per kind (LLM, EMBEDDING). */
export function formatModelList(models: LmsModel[]): string {
  if (models.length === 0) return "You have no models yet. Download one with: lms get <owner/name>";
  const total = models.reduce((sum, model) => sum + (model.size_bytes ?? 0), 0);
  const sections: string[] = [`You have ${models.length} model${models.length === 1 ? "" : "s"}, taking up ${formatSize(total)} of disk space.`];
  for (const [title, ofKind] of [["LLM", models.filter((m) => m.type !== "embedding")], ["EMBEDDING", models.filter((m) => m.type === "embedding")]] as const) {
    if (ofKind.length === 0) continue;
    const rows = [[title, "PARAMS", "ARCH", "SIZE", "DEVICE"]];
    for (const model of ofKind) {
      const loaded = (model.loaded_instances ?? []).length > 0 ? "    ✓ LOADED" : "";
      rows.push([model.key, model.params_string ?? "", model.architecture ?? "", formatSize(model.size_bytes), `Local${loaded}`]);
    }
    sections.push(table(rows));
  }
  return sections.join("\n\n");
}

/** `lms ps`: one block per loaded instance. */
export function formatLoadedModels(models: LmsModel[]): string {
  const blocks = models.flatMap((model) =>
    (model.loaded_instances ?? []).map((instance) => {
      const lines = [`Identifier: ${instance.id}`, `  • Type:  ${model.type === "embedding" ? "Embedding" : "LLM"}`];
      if (model.path) lines.push(`  • Path: ${model.path}`);
      if (model.size_bytes !== undefined) lines.push(`  • Size: ${formatSize(model.size_bytes)}`);
      if (model.architecture) lines.push(`  • Architecture: ${model.architecture}`);
      if (instance.config?.context_length) lines.push(`  • Context: ${instance.config.context_length}`);
      return lines.join("\n");
    }));
  if (blocks.length === 0) return "No models are currently loaded.\n\nTo load a model, run:\n    lms load <model>";
  return `   LOADED MODELS\n\n${blocks.join("\n\n")}`;
}
