// Which LoRA adapter the next step runs. In the pinned llama.cpp an adapter applies to a whole context
// (llama_set_adapters_lora), not to one sequence, so one decode serves the sequences of one adapter (or of
// the base model) only, as llama-server does not batch requests whose adapters differ. Requests that share
// an adapter decode together; adapters with sequences take turns.
//
// A turn lasts until its adapter has run ADAPTER_TURN_STEPS steps, or has nothing left to run; then the
// adapter that has waited longest goes (since it last ran, or since its first sequence was admitted). So
// with k adapters holding sequences none waits more than (k - 1) × ADAPTER_TURN_STEPS steps for its turn.
// A switch costs llama.cpp a new graph reservation at the next decode, which is why a turn is several
// steps and not one.
//
// Admission: vLLM's --max-loras bounds how many adapters may hold sequences at once; a request for another
// adapter waits until one of them has none left (the base model takes no such slot). Such a request still
// counts for the admission planner's starvation bound, which stops later requests overtaking it.

/** Steps an adapter keeps the context while another adapter has sequences waiting for it. */
export const ADAPTER_TURN_STEPS = 8;
/** The base model, with no per-request adapter. */
export const BASE_ADAPTER = 0;

/** An adapter with admitted sequences, as the planner sees it. */
export interface AdapterWork {
  adapter: number;
  /** The step it last ran in, or the step its first waiting sequence was admitted in when it has not run since. */
  since: number;
}

/** The adapter of the turn under way and the steps it has run. */
export interface AdapterTurn {
  adapter: number;
  steps: number;
}

/** The adapter the next step runs; undefined when no adapter has admitted sequences. */
export function chooseAdapterTurn(work: readonly AdapterWork[], turn: AdapterTurn | undefined, turnSteps = ADAPTER_TURN_STEPS): number | undefined {
  if (work.length === 0) return undefined;
  const current = turn && work.find((w) => w.adapter === turn.adapter);
  if (current && (turn.steps < turnSteps || work.length === 1)) return current.adapter;
  const others = work.filter((w) => w !== current);
  return others.reduce((longest, w) => (w.since < longest.since ? w : longest)).adapter;
}

/** The turn after a step run with `adapter`. */
export function advanceTurn(turn: AdapterTurn | undefined, adapter: number): AdapterTurn {
  return turn?.adapter === adapter ? { adapter, steps: turn.steps + 1 } : { adapter, steps: 1 };
}

/** Whether a request for `adapter` may take a sequence beside the adapters running now (vLLM's --max-loras). */
export function mayAdmitAdapter(adapter: number, running: ReadonlySet<number>, maxLoras: number): boolean {
  if (adapter === BASE_ADAPTER || running.has(adapter)) return true;
  let adapters = 0;
  for (const a of running) if (a !== BASE_ADAPTER) adapters++;
  return adapters < maxLoras;
}
