// When an idle engine starts stepping: not at the first request of a burst, but once the burst has
// arrived. Clients that send together (eight agents, a benchmark's clients, a batch script) reach the
// engine a millisecond or so apart, each after its own round trips for the prompt's tokens; the first
// one alone would otherwise get a step of its own and start generating while the others' prompts are
// processed beside it, so every later prompt step pauses its stream (on a CPU a 64-token prompt chunk
// costs several decode steps). Gathered, their prompts share the first steps and they generate in
// step. A lone request waits ARRIVAL_QUIET_MS at most; a burst at most ARRIVAL_WINDOW_MS.

/** The engine waits this long after the latest arrival for another one. */
export const ARRIVAL_QUIET_MS = 3;
/** A burst is gathered for at most this long after the engine woke. */
export const ARRIVAL_WINDOW_MS = 25;

/** Whether an idle engine that woke `sinceWokeMs` ago, the latest request `sinceLatestMs` ago, waits for more. */
export function gatherArrivals(sinceLatestMs: number, sinceWokeMs: number): boolean {
  return sinceLatestMs < ARRIVAL_QUIET_MS && sinceWokeMs < ARRIVAL_WINDOW_MS;
}
