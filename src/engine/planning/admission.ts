// Who gets a free sequence next: a decision over plain facts about the waiting requests, which the
// scheduler gathers (each one's prompt work left for the sequence it would get) and then carries out.
//
// Owners take turns. An owner is the key a request came with (every request without one shares the
// anonymous owner). When several owners wait, the sequence goes to the one holding the fewest sequences
// for its weight, so one key's eight parallel requests cannot keep another key's single request waiting
// for more than one admission; an owner at its sequence cap waits whatever the others do.
//
// Within an owner: lower priority value first (vLLM's `priority`), then the request with the fewest prompt
// tokens left to process once its reusable prefix is counted (an agent's next turn, mostly cached, before
// a cold prompt), the oldest on ties. Starvation is bounded: a request that later ones of its owner
// overtook MAX_OVERTAKEN times is admitted next, whatever its work.

/** Waiting requests weighed per owner at each admission: its oldest this many (each costs prefix comparisons). */
export const ADMISSION_WINDOW = 8;
/** A waiting request that later ones of its owner overtook this many times goes next. */
export const MAX_OVERTAKEN = 4;
/** The owner of requests that came without a key. */
export const ANONYMOUS_OWNER = "";

/** A waiting request as admission sees it, in queue order (oldest first). */
export interface WaitingView {
  owner: string;
  /** Lower goes first within its owner. */
  priority: number;
  /** Times later requests of its owner were admitted before it. */
  overtaken: number;
}

/** A weighed request: its queue index and the prompt tokens it would still process on the sequence it would get. */
export interface AdmissionCandidate {
  index: number;
  uncachedTokens: number;
}

/** What an owner holds and may hold. */
export interface OwnerShare {
  /** Sequences its requests hold now. */
  running: number;
  /** Its share beside other owners' (default 1). */
  weight: number;
  /** Most sequences it may hold (Infinity: no cap). */
  maxParallel: number;
}

/**
 * The queue indices worth weighing: each owner's oldest ADMISSION_WINDOW requests, or only its oldest
 * when that one was overtaken MAX_OVERTAKEN times already. Owners whose share is full are left out.
 */
export function admissionWindow(queue: readonly WaitingView[], shareOf: (owner: string) => OwnerShare, window = ADMISSION_WINDOW): number[] {
  const taken = new Map<string, number>();
  const closed = new Set<string>();
  const indices: number[] = [];
  queue.forEach((request, index) => {
    const { owner } = request;
    if (closed.has(owner)) return;
    const count = taken.get(owner) ?? 0;
    if (count === 0) {
      const share = shareOf(owner);
      if (share.running >= share.maxParallel) {
        closed.add(owner);
        return;
      }
    }
    indices.push(index);
    taken.set(owner, count + 1);
    if (count + 1 >= window || (count === 0 && request.overtaken >= MAX_OVERTAKEN)) closed.add(owner);
  });
  return indices;
}

/**
 * The candidate to admit: from the owner with the fewest running sequences per weight (the owner of the
 * oldest candidate on ties), its forced request if one was overtaken enough, else its lowest priority
 * value, then fewest uncached tokens, then oldest. Undefined when there is no candidate.
 */
export function chooseAdmission(
  queue: readonly WaitingView[], candidates: readonly AdmissionCandidate[], shareOf: (owner: string) => OwnerShare,
): AdmissionCandidate | undefined {
  let owner: string | undefined;
  let ownerLoad = Infinity;
  for (const candidate of candidates) {
    const name = queue[candidate.index]!.owner;
    if (name === owner) continue;
    const share = shareOf(name);
    const load = share.running / Math.max(share.weight, Number.MIN_VALUE);
    if (load < ownerLoad) {
      owner = name;
      ownerLoad = load;
    }
  }
  if (owner === undefined) return undefined;
  const own = candidates.filter((candidate) => queue[candidate.index]!.owner === owner);
  const oldest = own.reduce((a, b) => (b.index < a.index ? b : a));
  if (queue[oldest.index]!.overtaken >= MAX_OVERTAKEN) return oldest;
  return own.reduce((best, candidate) => (precedes(queue, candidate, best) ? candidate : best));
}

function precedes(queue: readonly WaitingView[], a: AdmissionCandidate, b: AdmissionCandidate): boolean {
  const pa = queue[a.index]!.priority;
  const pb = queue[b.index]!.priority;
  if (pa !== pb) return pa < pb;
  if (a.uncachedTokens !== b.uncachedTokens) return a.uncachedTokens < b.uncachedTokens;
  return a.index < b.index;
}

/** The queue indices of the admitted request's owner that were waiting before it: each was overtaken once more. */
export function overtakenBy(queue: readonly WaitingView[], admittedIndex: number): number[] {
  const owner = queue[admittedIndex]!.owner;
  const indices: number[] = [];
  for (let i = 0; i < admittedIndex; i++) if (queue[i]!.owner === owner) indices.push(i);
  return indices;
}
