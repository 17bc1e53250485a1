// `make bench` part "affinity" (issue 43): the agents shape over 2 llamux replicas behind HAProxy, README's
// recipe (scripts/haproxy-recipe.ts) with its session affinity against the same recipe with round-robin.
// The machine is split in two: each replica gets half the threads and half the sequences. Every session
// names itself with `x-session-id` (the recipe hashes on it, as on Claude Code's and Codex's headers), and
// each mode starts two fresh replicas, so neither finds the other's prompts cached. Rows: later turns' time
// to first token (p50, p90) and the run's throughput, affinity against round-robin, and later turns'
// cached share (issue 43: ≥ 90% with affinity).
import { HAPROXY, Haproxy, haproxyInstalled, localHaproxyConfig, readmeHaproxyConfig, roundRobinConfig } from "../haproxy-recipe.ts";
import { freePort } from "./free-port.ts";
import { type LlamuxCommand, type RunningServer, type ServerSpec, percentile, showCommand, startServer } from "./server.ts";
import { type SessionShape, SessionWorkload, type SessionsRun, cachedShare, laterTurnFigures, runSessions, vocabularySize } from "./agent-workload.ts";
import type { GoalRow } from "./report.ts";

export interface AffinityOptions extends SessionShape {
  /** Sequences and threads of the whole machine: each replica gets half. */
  parallel: number;
  threads: number;
  cacheRamMiB: number;
  llamux: LlamuxCommand;
  modelName: string;
  build: string;
  log: (line: string) => void;
}

const MODES = ["session affinity", "round-robin"] as const;
type Mode = (typeof MODES)[number];
const REPLICAS = 2;

async function runMode(mode: Mode, model: string, o: AffinityOptions, spec: ServerSpec): Promise<SessionsRun> {
  const replicas: RunningServer[] = [];
  let proxy: Haproxy | undefined;
  try {
    for (let i = 0; i < REPLICAS; i++) replicas.push(await startServer("llamux", spec));
    const port = await freePort();
    const local = localHaproxyConfig(readmeHaproxyConfig(), port, replicas.map((r) => Number(new URL(r.baseUrl).port)));
    proxy = await Haproxy.start(mode === "round-robin" ? roundRobinConfig(local) : local, port);
    const workload = new SessionWorkload(o, vocabularySize(model));
    return await runSessions(proxy.url, model, workload, o, { label: mode, log: o.log, headers: (session) => ({ "x-session-id": `bench-session-${session}` }) });
  } finally {
    await proxy?.stop();
    for (const replica of replicas) await replica.stop();
  }
}

export async function runSessionAffinity(model: string, o: AffinityOptions): Promise<{ markdown: string; json: unknown; goals: GoalRow[]; commands: string[] }> {
  const shape = `${o.sessions} sessions × ${o.turns} turns over ${REPLICAS} replicas`;
  const base = { issue: 43, model: o.modelName, build: o.build };
  if (!haproxyInstalled()) {
    const note = `${HAPROXY} is not installed (apt-get install haproxy)`;
    return { markdown: `### Sessions over ${REPLICAS} replicas behind HAProxy\n\nNot measured: ${note}.`, json: { skipped: note }, goals: [{ ...base, measure: `${shape}: later turns' TTFT p50, session affinity ÷ round-robin`, besideWhat: "round-robin", goal: { atMost: 1 }, note }], commands: [] };
  }
  const perReplica = { parallel: Math.max(1, Math.floor(o.parallel / REPLICAS)), threads: Math.max(1, Math.floor(o.threads / REPLICAS)) };
  const longest = o.prefixTokens + o.turns * o.turnTokens;
  const spec: ServerSpec = { model, ...perReplica, llamux: o.llamux, contextPerSequence: longest + o.outputTokens + 64, extraArgs: ["--cache-ram", String(o.cacheRamMiB)] };
  const runs = new Map<Mode, SessionsRun>();
  for (const mode of MODES) runs.set(mode, await runMode(mode, model, o, spec));
  const figures = (mode: Mode) => {
    const run = runs.get(mode)!;
    const later = laterTurnFigures(run.turns, () => undefined);
    return { ...later, share: cachedShare(run.turns.filter((t) => t.turn > 1)), throughput: run.completionTokens / (run.wallMs / 1000), turnsPerMinute: run.turns.length / (run.wallMs / 60_000), wallMs: run.wallMs };
  };
  const sticky = figures("session affinity");
  const rotated = figures("round-robin");
  const ms = (value: number) => `${value.toFixed(0)} ms`;
  const goals: GoalRow[] = [
    { ...base, measure: `${shape}: later turns' TTFT p50, session affinity ÷ round-robin`, llamux: ms(sticky.p50Ms), beside: ms(rotated.p50Ms), besideWhat: "round-robin", ratio: sticky.p50Ms / rotated.p50Ms, goal: { atMost: 1 } },
    { ...base, measure: `${shape}: later turns' TTFT p90, session affinity ÷ round-robin`, llamux: ms(sticky.p90Ms), beside: ms(rotated.p90Ms), besideWhat: "round-robin", ratio: sticky.p90Ms / rotated.p90Ms, goal: { atMost: 1 } },
    { ...base, measure: `${shape}: throughput (generated tokens over the run), session affinity ÷ round-robin`, llamux: `${sticky.throughput.toFixed(2)} t/s`, beside: `${rotated.throughput.toFixed(2)} t/s`, besideWhat: "round-robin", ratio: sticky.throughput / rotated.throughput, goal: { atLeast: 1 } },
    { ...base, measure: `${shape}: later turns' share of the prompt read from the cache, with session affinity`, llamux: `${(sticky.share * 100).toFixed(1)}%`, beside: `${(rotated.share * 100).toFixed(1)}%`, besideWhat: "round-robin", ratio: sticky.share, goal: { atLeast: 0.9 } },
  ];
  const row = (mode: Mode) => {
    const f = figures(mode);
    return `| ${mode} | ${(f.share * 100).toFixed(1)}% | ${f.p50Ms.toFixed(0)} | ${f.p90Ms.toFixed(0)} | ${percentile(runs.get(mode)!.turns.filter((t) => t.turn > 1).map((t) => t.ttftMs), 100).toFixed(0)} | ${f.throughput.toFixed(2)} | ${f.turnsPerMinute.toFixed(1)} | ${(f.wallMs / 1000).toFixed(0)} s |`;
  };
  const commands = [showCommand("llamux", spec), "haproxy -db -f haproxy.cfg   (README's recipe, replicas on loopback; round-robin: its balance lines set to roundrobin)"];
  const markdown = [
    `### ${shape} behind HAProxy: session affinity against round-robin (${o.prefixTokens}-token shared prefix, +${o.turnTokens} tokens a turn, ${o.outputTokens} tokens out; each replica ${perReplica.parallel} sequence(s), ${perReplica.threads} thread(s), --cache-ram ${o.cacheRamMiB}); llamux ${o.build}`,
    "",
    "| routing | later turns cached | TTFT p50 ms | p90 ms | worst ms | generated t/s | turns a minute | run |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
    ...MODES.map(row),
    "",
    "Replica command (twice, each on a free port):",
    ...commands.map((c) => `    ${c}`),
  ].join("\n");
  return { markdown, json: Object.fromEntries([...runs].map(([mode, run]) => [mode, { ...figures(mode), turns: run.turns }])), goals, commands };
}
