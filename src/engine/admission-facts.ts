// The facts the admission planner (planning/admission.ts) decides on, gathered from the scheduler's
// queue, its running sequences and their memory: each weighed request's owner, priority and how many of
// its prompt tokens would still be processed on the sequence it would get.
import { admissionWindow, chooseAdmission, ANONYMOUS_OWNER, type OwnerShare, type WaitingView } from "./planning/admission.ts";
import { choosePreemption, mayYield, type RunningPrompt } from "./planning/preemption.ts";
import { reusedTokens } from "./planning/prefix-source.ts";
import type { ActiveRequest, SequenceSlot } from "./sequence.ts";
import type { PrefixSource, SequenceMemory } from "./sequence-memory.ts";

export interface Admission {
  /** Its index in the queue. */
  index: number;
  active: ActiveRequest;
  slot: SequenceSlot;
  source: PrefixSource;
}

const ownerOf = (active: ActiveRequest) => active.request.schedule?.owner ?? ANONYMOUS_OWNER;
const priorityOf = (active: ActiveRequest) => active.request.schedule?.priority ?? 0;

/** The queue as the planner sees it. */
export function waitingViews(queue: readonly ActiveRequest[]): WaitingView[] {
  return queue.map((active) => ({ owner: ownerOf(active), priority: priorityOf(active), overtaken: active.overtaken }));
}

/**
 * The waiting request a free sequence goes to, with that sequence and where its prefix comes from.
 * Requests whose disk state is still being read are not weighed, nor those `admissible` refuses now (a
 * LoRA adapter beyond --max-loras). Undefined when no sequence is free or nothing may be admitted.
 */
export function nextAdmission(
  queue: readonly ActiveRequest[], running: readonly SequenceSlot[], memory: SequenceMemory, admissible?: (active: ActiveRequest) => boolean,
): Admission | undefined {
  const choice = chooseWaiting(queue, running, memory, admissible, (active) => memory.pickSlot(active.prompt, active.request.schedule?.session, active.adapterId));
  return choice && { index: choice.index, active: queue[choice.index]!, slot: choice.slot, source: choice.source };
}

/**
 * What admission would choose if each weighed request got the sequence `slotFor` names for it: the queue
 * index, that sequence, its prefix source there and the prompt tokens it would still process. Undefined
 * when nothing may be weighed or `slotFor` has no sequence to give.
 */
function chooseWaiting(
  queue: readonly ActiveRequest[], running: readonly SequenceSlot[], memory: SequenceMemory, admissible: ((active: ActiveRequest) => boolean) | undefined,
  slotFor: (active: ActiveRequest) => SequenceSlot | undefined,
): { index: number; uncachedTokens: number; slot: SequenceSlot; source: PrefixSource } | undefined {
  const waiting = waitingViews(queue);
  const shares = new Map<string, OwnerShare>();
  const shareOf = (owner: string) => shares.get(owner) ?? shares.set(owner, ownerShare(owner, queue, running)).get(owner)!;
  const weighed = new Map<number, { slot: SequenceSlot; source: PrefixSource }>();
  const candidates: Array<{ index: number; uncachedTokens: number }> = [];
  for (const index of admissionWindow(waiting, shareOf)) {
    const active = queue[index]!;
    if (active.awaitingDisk && memory.isLoading(active.awaitingDisk)) continue;
    if (admissible && !admissible(active)) continue;
    const slot = slotFor(active);
    if (!slot) return undefined;
    const source = memory.prefixSource(slot, active);
    weighed.set(index, { slot, source });
    candidates.push({ index, uncachedTokens: active.prompt.length - reusedTokens(source) });
  }
  const chosen = chooseAdmission(waiting, candidates, shareOf);
  return chosen && { ...chosen, ...weighed.get(chosen.index)! };
}

/** A running prompt that gives its sequence away, and the waiting request it goes to with that request's prefix source. */
export interface Preemption {
  victim: SequenceSlot;
  chosen: ActiveRequest;
  source: PrefixSource;
}

/**
 * With every sequence busy: the running prompt that gives its sequence to the waiting request admission
 * would choose next, weighed on that sequence (planning/preemption.ts). Only with a host cache, which
 * keeps the yielding prompt's work. When the chosen request's prefix is on disk, the caller reads it into
 * host memory first (as for a free sequence) and weighs again. Undefined: nobody yields.
 */
export function nextPreemption(
  queue: readonly ActiveRequest[], running: readonly SequenceSlot[], memory: SequenceMemory, admissible?: (active: ActiveRequest) => boolean,
): Preemption | undefined {
  if (!memory.promptCache || queue.length === 0) return undefined;
  const runs: RunningPrompt[] = running.map((slot) => {
    const active = slot.active!;
    return {
      left: active.prompt.length - active.nextPromptIndex, priority: priorityOf(active),
      yielded: active.yielded, pinned: !active.prefilling || active.images.length > 0,
    };
  });
  const yielding = runs.map((run, i) => (mayYield(run) ? i : -1)).filter((i) => i >= 0);
  if (yielding.length === 0) return undefined;
  // weighed on the sequence it would most likely get: the one with the most left
  const target = running[yielding.reduce((a, b) => (runs[b]!.left > runs[a]!.left ? b : a))]!;
  const chosen = chooseWaiting(queue, running, memory, admissible, () => target);
  if (!chosen) return undefined;
  const victim = choosePreemption({ uncachedTokens: chosen.uncachedTokens, priority: priorityOf(queue[chosen.index]!) }, runs);
  return victim === undefined ? undefined : { victim: running[victim]!, chosen: queue[chosen.index]!, source: chosen.source };
}

/** What an owner's requests hold now, and its weight and cap as its newest request says. */
function ownerShare(owner: string, queue: readonly ActiveRequest[], running: readonly SequenceSlot[]): OwnerShare {
  const count = running.filter((slot) => ownerOf(slot.active!) === owner).length;
  const newest = queue.findLast((active) => ownerOf(active) === owner)?.request.schedule;
  return { running: count, weight: newest?.weight ?? 1, maxParallel: newest?.maxParallel ?? Infinity };
}
