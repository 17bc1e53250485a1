// Turns the collected samples into rows (llama.cpp tool vs llamux, ratio, target, PASS/FAIL) and writes
// them as a markdown table and as JSON.
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { LIBRARY_BUILD_COMMAND, type LibraryKind, type LibrarySet } from "./libraries.ts";
import type { MachineInfo } from "./machine.ts";
import { type Summary, summarize } from "./stats.ts";

/** One compared quantity, e.g. pp512 against llama-bench, with the issue's target ratio. */
export interface Metric {
  id: string; // "pp512", "tg128", "batch4"
  label: string; // shown in the table
  tool: string; // the llama.cpp tool giving the reference number
  target: number; // llamux / tool must reach this ratio
}

export interface Sample {
  tokensPerSecond: number;
  foreignCpuShare: number; // how busy other processes kept the machine meanwhile
}

/** Samples keyed by model, metric and source ("llama.cpp" or a library kind). */
export class SampleBook {
  private readonly samples = new Map<string, Sample[]>();
  private static key(model: string, metric: string, source: string): string {
    return `${model}\u0000${metric}\u0000${source}`;
  }
  add(model: string, metric: string, source: string, sample: Sample): void {
    const key = SampleBook.key(model, metric, source);
    const list = this.samples.get(key) ?? [];
    list.push(sample);
    this.samples.set(key, list);
  }
  get(model: string, metric: string, source: string): Sample[] {
    return this.samples.get(SampleBook.key(model, metric, source)) ?? [];
  }
}

export const TOOL_SOURCE = "llama.cpp";

export interface ResultRow {
  model: string;
  metric: string;
  tool: string;
  libraries: string; // library kind llamux ran on, "-" when llamux did not run
  toolTokensPerSecond?: Summary;
  llamuxTokensPerSecond?: Summary;
  toolSamples: Sample[];
  llamuxSamples: Sample[];
  noisySamples: number; // samples kept although other processes used more than the allowed CPU share
  ratio?: number;
  target: number;
  result: "PASS" | "FAIL" | "n/a";
}

const rates = (samples: Sample[]) => samples.map((s) => s.tokensPerSecond);

export function buildRows(models: string[], metrics: Metric[], libraries: LibrarySet[], book: SampleBook, maxForeignCpuShare: number): ResultRow[] {
  const rows: ResultRow[] = [];
  for (const model of models) {
    for (const metric of metrics) {
      const toolSamples = book.get(model, metric.id, TOOL_SOURCE);
      const toolSummary = summarize(rates(toolSamples));
      const sources = libraries.length > 0 ? libraries.map((l) => l.kind as string) : ["-"];
      for (const source of sources) {
        const llamuxSamples = source === "-" ? [] : book.get(model, metric.id, source);
        const llamuxSummary = summarize(rates(llamuxSamples));
        const noisySamples = [...toolSamples, ...llamuxSamples].filter((x) => x.foreignCpuShare > maxForeignCpuShare).length;
        const ratio = toolSummary && llamuxSummary ? llamuxSummary.median / toolSummary.median : undefined;
        rows.push({
          model, metric: metric.label, tool: metric.tool, libraries: source,
          toolTokensPerSecond: toolSummary, llamuxTokensPerSecond: llamuxSummary, toolSamples, llamuxSamples, noisySamples,
          ratio, target: metric.target,
          result: ratio === undefined ? "n/a" : ratio >= metric.target ? "PASS" : "FAIL",
        });
      }
    }
  }
  return rows;
}

/**
 * One goal of an issue, measured: llamux's figure against what it is compared with (llama-server, the
 * engine limit, plain decoding, a cold turn, the prompt's length), their ratio and the goal for that ratio.
 * Every part that checks a goal adds its rows; the report lists them first, under the build they ran on.
 */
export interface GoalRow {
  issue: number;
  model: string;
  /** the llamux build and its libraries: "release (linux-x64-portable-cpu)" */
  build: string;
  measure: string;
  /** llamux's figure and the one it is compared with, as shown (units included) */
  llamux?: string;
  beside?: string;
  /** what `beside` is: "llama-server", "llama-batched-bench B=8", "plain decoding", "a cold turn" */
  besideWhat: string;
  ratio?: number;
  goal: { atLeast: number } | { atMost: number };
  /** why there is no ratio, or what else to know */
  note?: string;
}

export function goalResult(row: GoalRow): "PASS" | "FAIL" | "n/a" {
  if (row.ratio === undefined || !Number.isFinite(row.ratio)) return "n/a";
  return ("atLeast" in row.goal ? row.ratio >= row.goal.atLeast : row.ratio <= row.goal.atMost) ? "PASS" : "FAIL";
}

const goalText = (goal: GoalRow["goal"]) => ("atLeast" in goal ? `≥ ${goal.atLeast}` : `≤ ${goal.atMost}`);

export function goalTable(rows: GoalRow[]): string {
  const lines = [
    "| issue | model | llamux build | measure | llamux | beside it | ratio | goal | result |",
    "|---|---|---|---|---:|---:|---:|---|---|",
  ];
  for (const r of rows) {
    const ratio = r.ratio === undefined || !Number.isFinite(r.ratio) ? "–" : r.ratio.toFixed(r.ratio < 0.1 ? 3 : 2);
    const note = r.note ? ` (${r.note})` : "";
    lines.push(`| ${r.issue} | ${r.model} | ${r.build} | ${r.measure} | ${r.llamux ?? "–"} | ${r.beside ?? "–"} ${r.besideWhat} | ${ratio} | ${goalText(r.goal)} | ${goalResult(r)}${note} |`);
  }
  return lines.join("\n");
}

export interface BenchReport {
  date: string;
  runs: number;
  threads: number;
  maxForeignCpuShare: number;
  machine: MachineInfo;
  /**
   * tools: llama.cpp's; libraries: what the engine parts ran on; llamux: what the server parts ran
   * (name and what it is); missingLlamux: requested builds that are not here, with how to build them.
   */
  builds: { tools: string; libraries: LibrarySet[]; missingLibraries: LibraryKind[]; llamux: Array<{ name: string; what: string }>; missingLlamux: string[] };
  models: Record<string, string>; // name -> file
  commands: string[]; // the exact command lines of the first round
  rows: ResultRow[];
  /** every issue goal the parts checked, with PASS/FAIL */
  goals: GoalRow[];
  /** markdown sections of the other parts (sampling, whole server) */
  sections: string[];
  /** the whole-server part's samples, per model */
  server: Record<string, unknown>;
  notes: string[]; // missing pieces and failures
  durationSeconds: number;
}

const tps = (s: Summary | undefined) => (s ? `${s.median.toFixed(1)} (${s.min.toFixed(1)}–${s.max.toFixed(1)})` : "–");

export function markdownTable(rows: ResultRow[]): string {
  const header = "| model | metric | llama.cpp tool | tool t/s median (min–max) | llamux libs | llamux t/s median (min–max) | ratio | target | result | noisy |";
  const lines = [header, "|---|---|---|---:|---|---:|---:|---:|---|---:|"];
  for (const r of rows) {
    const ratio = r.ratio === undefined ? "–" : `${(r.ratio * 100).toFixed(1)}%`;
    lines.push(`| ${r.model} | ${r.metric} | ${r.tool} | ${tps(r.toolTokensPerSecond)} | ${r.libraries} | ${tps(r.llamuxTokensPerSecond)} | ${ratio} | ≥ ${(r.target * 100).toFixed(0)}% | ${r.result} | ${r.noisySamples} |`);
  }
  return lines.join("\n");
}

export function markdownReport(report: BenchReport): string {
  const m = report.machine;
  return [
    `# llamux benchmark ${report.date}`,
    "",
    `${report.runs} interleaved run(s) per cell, ${report.threads} threads, medians with min–max; ratio = llamux median / llama.cpp median.`,
    `"noisy": samples kept although other processes used more than ${(report.maxForeignCpuShare * 100).toFixed(0)}% of the CPU while they ran (after retries).`,
    "",
    ...(report.goals.length > 0 ? ["## Goals", "", goalTable(report.goals), ""] : []),
    ...(report.rows.length > 0 ? ["## Engine", "", markdownTable(report.rows), ""] : []),
    ...report.sections.flatMap((section) => [section, ""]),
    "## Machine",
    `- CPU: ${m.cpuModel}, ${m.logicalCores} logical cores, ${m.memoryGiB} GiB; SIMD: ${m.cpuFlags.join(" ") || "?"}`,
    `- load average at start: ${m.loadAverage.join(" ")} (other users of the machine slow every column alike; interleaving spreads it)`,
    `- ${m.os}, Bun ${m.bunVersion}, llama.cpp release ${m.llamaCppRelease}`,
    "",
    "## Builds",
    `- llama.cpp tools (.native/tools, \`make llama-tools\`): ${report.builds.tools}`,
    ...report.builds.libraries.map((l) => `- llamux on ${l.kind} libraries: ${relative(process.cwd(), l.dir)} (${l.variant})`),
    ...report.builds.missingLibraries.map((k) => `- ${k} libraries: not found (run \`${LIBRARY_BUILD_COMMAND[k]}\`)`),
    ...report.builds.llamux.map((b) => `- server parts: llamux ${b.name}: the ${b.what}`),
    ...report.builds.missingLlamux.map((line) => `- ${line}`),
    "",
    "## Models",
    ...Object.entries(report.models).map(([name, file]) => `- ${name}: ${file}`),
    "",
    "## Commands (first round)",
    "```",
    ...report.commands,
    "```",
    ...(report.notes.length > 0 ? ["", "## Notes", ...report.notes.map((n) => `- ${n}`)] : []),
    "",
    `Took ${Math.round(report.durationSeconds)} s.`,
    "",
  ].join("\n");
}

/** Writes bench-results/<date>.md and .json; returns their paths. */
export function writeReport(report: BenchReport, outputDir: string): { markdown: string; json: string } {
  mkdirSync(outputDir, { recursive: true });
  const stem = report.date.replace(/:/g, "-").replace(/\.\d+Z$/, "Z"); // ':' is awkward in file names
  const markdown = join(outputDir, `${stem}.md`);
  const json = join(outputDir, `${stem}.json`);
  writeFileSync(markdown, markdownReport(report));
  writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  return { markdown, json };
}
