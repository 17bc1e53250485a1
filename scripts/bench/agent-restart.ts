// The agents part after a restart (issue 42): llamux ran the sessions with its disk tier in a directory
// of its own (`--cache-disk DIR`). Once the disk tier holds what the sessions left (its size in /metrics,
// `llamux:prompt_cache_tier_bytes{tier="disk"}`, stops growing), the server stops (SIGTERM: it also writes
// what host memory still held) and starts again on the same directory; then each session sends its next
// turn, one at a time (no queueing), and a cold prompt of the same length gives the turn's yardstick.
import { readMetric } from "./metrics.ts";
import { type RunningServer, type ServerSpec, startServer } from "./server.ts";
import { type SessionWorkload, timeToFirstToken } from "./agent-workload.ts";

export interface RestartTurn {
  session: number;
  promptTokens: number;
  cachedTokens: number;
  ttftMs: number;
  /** a cold prompt of the same length on the restarted server */
  coldMs: number;
}

export interface RestartResult {
  /** what the disk tier held before the restart, and how long it took to stop growing */
  diskBytes: number;
  waitedMs: number;
  /** spawn to the first answer of the restarted server */
  restartMs: number;
  turns: RestartTurn[];
  /** prompts that took their prefix from the disk tier after the restart (its /metrics counter) */
  diskHits: number;
}

const POLL_MS = 500;
/** Polls in a row with the same size before the tier counts as written. */
const STEADY_POLLS = 4;
const WRITE_TIMEOUT_MS = 300_000;
/** SIGTERM to exit: the server writes what host memory holds first. */
const STOP_GRACE_MS = 120_000;

/** Waits until the disk tier holds something and its size stopped changing; its bytes and the time waited. */
export async function waitForDiskTier(baseUrl: string): Promise<{ bytes: number; waitedMs: number }> {
  const started = performance.now();
  let last = -1;
  let steady = 0;
  for (;;) {
    const bytes = await readMetric(baseUrl, "llamux:prompt_cache_tier_bytes", { tier: "disk" });
    steady = bytes > 0 && bytes === last ? steady + 1 : 0;
    last = bytes;
    const waitedMs = performance.now() - started;
    if (steady >= STEADY_POLLS) return { bytes, waitedMs };
    if (waitedMs > WRITE_TIMEOUT_MS) throw new Error(`the disk tier did not settle within ${WRITE_TIMEOUT_MS / 1000} s (${bytes} bytes)`);
    await Bun.sleep(POLL_MS);
  }
}

/** Restarts `server` (started from `spec`, whose cacheDiskDir is set) and measures each session's next turn. */
export async function measureAfterRestart(
  server: RunningServer, spec: ServerSpec, model: string, workload: SessionWorkload, o: { sessions: number; outputTokens: number; log: (line: string) => void },
): Promise<{ server: RunningServer; result: RestartResult }> {
  if (!spec.cacheDiskDir) throw new Error("the restart needs the server's --cache-disk directory");
  const { bytes: diskBytes, waitedMs } = await waitForDiskTier(server.baseUrl);
  o.log(`llamux: disk tier holds ${(diskBytes / 1048576).toFixed(1)} MiB after ${(waitedMs / 1000).toFixed(1)} s; restarting`);
  await server.stop(STOP_GRACE_MS);
  const restarted = await startServer("llamux", spec);
  o.log(`llamux: restarted on ${spec.cacheDiskDir} in ${(restarted.readyMs / 1000).toFixed(1)} s`);
  const turns: RestartTurn[] = [];
  for (let session = 0; session < o.sessions; session++) {
    const { prompt } = workload.next(session);
    const answer = await timeToFirstToken(restarted.baseUrl, model, prompt, o.outputTokens);
    turns.push({ session, promptTokens: prompt.length, cachedTokens: answer.cachedTokens, ttftMs: answer.ttftMs, coldMs: NaN });
    o.log(`llamux after the restart: session ${session}'s next turn (${prompt.length} tokens, ${answer.cachedTokens} cached): first token after ${answer.ttftMs.toFixed(0)} ms`);
  }
  // cold prompts after every session's turn, one per length, so that none of them waits behind a state being written
  const coldByLength = new Map<number, number>();
  for (const turn of turns) {
    if (!coldByLength.has(turn.promptTokens)) {
      const cold = await timeToFirstToken(restarted.baseUrl, model, workload.cold(turn.promptTokens, 79_000 + coldByLength.size), o.outputTokens);
      coldByLength.set(turn.promptTokens, cold.ttftMs);
      o.log(`llamux after the restart: cold prompt of ${turn.promptTokens} tokens: first token after ${cold.ttftMs.toFixed(0)} ms`);
    }
    turn.coldMs = coldByLength.get(turn.promptTokens)!;
  }
  const diskHits = await readMetric(restarted.baseUrl, "llamux:prompt_cache_hits", { tier: "disk" });
  return { server: restarted, result: { diskBytes, waitedMs, restartMs: restarted.readyMs, turns, diskHits } };
}
