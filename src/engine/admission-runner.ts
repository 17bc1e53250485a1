// Carries out admission at the start of every step: the planners decide (admission-facts.ts over
// planning/admission.ts and planning/preemption.ts), this gives the chosen requests their sequences. A
// request whose prefix is on disk has it read into host memory first and is weighed again once it is
// there; one that does not fit a shared KV pool beside the running prompts waits; with every sequence
// busy, a cold prompt may give its sequence to a warm turn and wait at the head of the queue.
import { overtakenBy } from "./planning/admission.ts";
import { nextAdmission, nextPreemption, waitingViews } from "./admission-facts.ts";
import { CHECKPOINT_MIN_NEW_TOKENS, type PrefixSource, type SequenceMemory } from "./sequence-memory.ts";
import type { ActiveRequest, SequenceSlot } from "./sequence.ts";
import type { DiskEntry } from "./prompt-cache/disk-store.ts";
import type { AdapterSchedule } from "./adapter-schedule.ts";

/** Prompt cells admitted requests have yet to fill: held for them, so that admitted prompts always finish. */
export function reservedForPrompts(admitted: readonly SequenceSlot[]): number {
  return admitted.reduce((sum, slot) => sum + Math.max(0, slot.active!.prompt.length - slot.active!.nextPromptIndex), 0);
}

export class AdmissionRunner {
  /** Prompts that gave their sequence to a mostly cached request (vLLM's preemptions). */
  preemptions = 0;

  constructor(
    /** Waiting requests, oldest first (the scheduler's own array). */
    private readonly queue: ActiveRequest[],
    /** Slots with a request, in admission order (the scheduler's own array). */
    private readonly admitted: SequenceSlot[],
    private readonly memory: SequenceMemory,
    private readonly options: { adapters?: AdapterSchedule; speculating: boolean },
  ) {}

  /** Admits waiting requests while sequences (and cells) allow. */
  admitWaiting(): void {
    while (this.queue.length > 0) {
      const next = nextAdmission(this.queue, this.admitted, this.memory, this.options.adapters?.mayAdmit);
      if (!next) {
        if (this.yieldToWarmTurn()) continue;
        return;
      }
      const { index, active, slot, source } = next;
      if (source.kind === "disk") {
        this.readFromDisk(active, source.match as DiskEntry);
        continue;
      }
      if (!this.roomForPrompt(active, slot, source)) return;
      for (const overtaken of overtakenBy(waitingViews(this.queue), index)) this.queue[overtaken]!.overtaken++;
      this.queue.splice(index, 1);
      this.start(slot, active, source);
    }
  }

  /** The request takes the slot: its prefix is kept, copied or restored there, and its prompt starts after it. */
  private start(slot: SequenceSlot, active: ActiveRequest, source: PrefixSource): void {
    this.memory.apply(slot, active, source);
    if (active.awaitingDisk) {
      if (source.kind === "cache") this.memory.countDiskHit(active.adapterId);
      active.awaitingDisk = undefined;
    }
    if (!this.memory.canRollBack && active.prompt.length - slot.cached.length >= CHECKPOINT_MIN_NEW_TOKENS) {
      active.checkpointAfterPrompt = true;
    }
    active.nextPromptIndex = slot.cached.length;
    active.sharedPrefixEnd = this.memory.sharedPrefixEnd(slot, active, this.queue);
    // a prompt that yielded its sequence restores its own work: that is not cached for its client
    if (active.yielded === 0) {
      active.cachedPromptTokens = slot.cached.length;
      active.startedAt = performance.now();
    }
    if (this.options.speculating) active.draftTokens = 0;
    slot.active = active;
    this.admitted.push(slot);
  }

  /**
   * With every sequence busy: a prompt with much left to process may give its sequence to the mostly cached
   * request admission would choose (planning/preemption.ts). It goes back to the head of the queue; its
   * memory stays in the sequence until the next admission there keeps it in the host cache. True when one yielded.
   */
  private yieldToWarmTurn(): boolean {
    if (this.memory.slots.some((slot) => !slot.active)) return false;
    const plan = nextPreemption(this.queue, this.admitted, this.memory, this.options.adapters?.mayAdmit);
    if (!plan) return false;
    if (plan.source.kind === "disk") {
      this.readFromDisk(plan.chosen, plan.source.match as DiskEntry);
      return false;
    }
    const slot = plan.victim;
    const active = slot.active!;
    slot.active = undefined;
    slot.outputIndex = -1;
    this.admitted.splice(this.admitted.indexOf(slot), 1);
    active.yielded++;
    this.preemptions++;
    this.queue.unshift(active);
    return true;
  }

  /** Reads the request's prefix state from disk into host memory off the step loop; it is weighed again once there. */
  private readFromDisk(active: ActiveRequest, entry: DiskEntry): void {
    active.awaitingDisk = entry;
    void this.memory.loadFromDisk(entry, active.adapterId);
  }

  /** Whether the prompt fits beside what runs now; it waits in the queue until it does. Alone, it always fits. */
  private roomForPrompt(active: ActiveRequest, slot: SequenceSlot, source: PrefixSource): boolean {
    return this.admitted.length === 0 || this.memory.fits(active, slot, source, reservedForPrompts(this.admitted));
  }
}
