// Issue 41's table, one row per measure, for one model and one llamux build, drawn from the server part's
// samples (server-scenario.ts) and the speculative part's pairs (speculative.ts). A row that its part did
// not measure says so instead of a ratio.
import { type ScenarioSamples, LLAMA_SERVER_ID, constrainedMedian, engineLimit, loadMedian } from "./server-scenario.ts";
import type { PairedSample } from "./speculative.ts";
import { percentile } from "./server.ts";
import { summarize } from "./stats.ts";
import type { GoalRow } from "./report.ts";
import type { ConstrainedMode } from "./server.ts";

const show = (value: number | undefined, unit: string) => (value === undefined ? undefined : `${value >= 100 ? value.toFixed(0) : value.toFixed(1)} ${unit}`);

/** `speculation`: the speculative part's pairs on this model's shape. */
export function issue41Rows(model: string, build: { id: string; name: string }, server: ScenarioSamples | undefined, speculation: PairedSample[] | undefined, parallel: number): GoalRow[] {
  const base = { issue: 41, model, build: build.name };
  const rows: GoalRow[] = [];
  const notMeasured = (part: string) => `not measured: part ${part} did not run or failed`;
  const versus = (measure: string, unit: string, value: (id: string) => number | undefined, goal: GoalRow["goal"]) => {
    const llamux = server && value(build.id);
    const reference = server && value(LLAMA_SERVER_ID);
    rows.push({
      ...base, measure, llamux: show(llamux, unit), beside: show(reference, unit), besideWhat: "llama-server",
      ratio: llamux !== undefined && reference ? llamux / reference : undefined, goal, ...(llamux === undefined || !reference ? { note: notMeasured("server") } : {}),
    });
  };
  versus(`${parallel} clients, throughput`, "t/s", (id) => loadMedian(server!, id, parallel, "top-k", (r) => r.tokensPerSecond), { atLeast: 1 });
  versus("1 client, throughput", "t/s", (id) => loadMedian(server!, id, 1, "top-k", (r) => r.tokensPerSecond), { atLeast: 1 });
  versus(`${parallel} clients, inter-token p99`, "ms", (id) => loadMedian(server!, id, parallel, "top-k", (r) => percentile(r.interTokenMs, 99)), { atMost: 1.25 });
  versus(`${parallel} clients, time to first token p99`, "ms", (id) => loadMedian(server!, id, parallel, "top-k", (r) => percentile(r.ttftMs, 99)), { atMost: 1 });
  // the same server's whole vocabulary against its top-k 40; llama-server's own ratio beside it
  const wholeVocabulary = (id: string) => {
    const full = server && loadMedian(server, id, 1, "full", (r) => r.tokensPerSecond);
    const topK = server && loadMedian(server, id, 1, "top-k", (r) => r.tokensPerSecond);
    return full !== undefined && topK ? full / topK : undefined;
  };
  const mine = wholeVocabulary(build.id);
  const theirs = wholeVocabulary(LLAMA_SERVER_ID);
  rows.push({
    ...base, measure: "1 client, whole vocabulary ÷ top-k 40 (same server)", llamux: mine?.toFixed(3), beside: theirs?.toFixed(3), besideWhat: "llama-server's own",
    ratio: mine, goal: { atLeast: 0.97 }, ...(mine === undefined ? { note: notMeasured("server") } : {}),
  });
  const modes: Array<[ConstrainedMode, string]> = [["json-schema", "JSON schema"], ["tool-call", "forced tool call (tool_choice required)"], ["tool-grammar", "forced tool call, the same grammar on both"]];
  for (const [mode, label] of modes) {
    versus(`${label}, 1 client`, "t/s", (id) => constrainedMedian(server!, id, mode), { atLeast: 1 });
  }
  const limit = server && engineLimit(server, parallel);
  const fraction = (id: string) => {
    const rate = server && loadMedian(server, id, parallel, "top-k", (r) => r.tokensPerSecond);
    return rate !== undefined && limit ? rate / limit : undefined;
  };
  const ofLimit = fraction(build.id);
  rows.push({
    ...base, measure: `${parallel} clients ÷ the engine's own limit (llama-batched-bench B=${parallel}, prompts + decoding)`,
    llamux: show(server && loadMedian(server, build.id, parallel, "top-k", (r) => r.tokensPerSecond), "t/s"), beside: show(limit, "t/s"), besideWhat: "llama-batched-bench",
    ratio: ofLimit, goal: { atLeast: 0.95 },
    note: ofLimit === undefined ? (limit === undefined ? "not measured: llama-batched-bench did not run (make llama-tools builds it)" : notMeasured("server")) : `llama-server ${fraction(LLAMA_SERVER_ID)?.toFixed(2) ?? "–"}`,
  });
  // speculation at the most streams measured, n-gram lookup on a copying prompt against plain decoding of it, two servers
  const copies = (speculation ?? []).filter((s) => s.build === build.id && s.case === "ngram-copy");
  const widest = copies.toSorted((a, b) => b.streams - a.streams)[0];
  const ratio = widest ? summarize(widest.ratios)!.median : undefined;
  rows.push({
    ...base, measure: `speculation at ${widest?.streams ?? 8} streams, two servers (n-gram on a copying prompt ÷ plain)`,
    llamux: show(widest?.tokensPerSecond, "t/s"), beside: show(widest?.baselineTokensPerSecond, "t/s"), besideWhat: "plain decoding",
    ratio, goal: { atLeast: 0.95 }, note: widest ? `median of ${widest.ratios.length} pair(s), ${widest.accepted} of ${widest.drafted} drafted accepted` : notMeasured("speculative (case ngram-copy)"),
  });
  return rows;
}
