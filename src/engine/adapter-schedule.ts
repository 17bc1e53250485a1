// Carries the adapter-turn planner out (planning/adapter-turns.ts) for an engine that serves LoRA adapters
// per request: gathers which adapters hold admitted sequences, picks the step's adapter, applies its set
// to the context and hands the scheduler the slots that step; says which waiting requests may take a
// sequence (--max-loras), what runs and waits (vLLM's lora_requests_info), keeps each adapter's disk store
// in the sequences' memory, and frees unloaded adapters (closing their stores) once no request uses them.
//
// It reads the scheduler's own queue and admitted lists, which the scheduler changes in place.
import type { LoraAdapterStats } from "./types.ts";
import type { ActiveRequest, SequenceSlot } from "./sequence.ts";
import type { LoraAdapters, ServedAdapter } from "./lora-adapters.ts";
import type { SequenceMemory } from "./sequence-memory.ts";
import type { DiskPromptStore } from "./prompt-cache/disk-store.ts";
import { advanceTurn, chooseAdapterTurn, mayAdmitAdapter, type AdapterTurn, type AdapterWork } from "./planning/adapter-turns.ts";

export class AdapterSchedule {
  private turn: AdapterTurn | undefined;
  /** Per adapter with admitted sequences: the step it last ran in, or the step it was first seen waiting in. */
  private readonly since = new Map<number, number>();
  private steps = 0;
  /** Adapter switches since the engine started (each costs llama.cpp a graph reservation). */
  switches = 0;

  constructor(
    readonly adapters: LoraAdapters, private readonly memory: SequenceMemory,
    private readonly queue: readonly ActiveRequest[], private readonly admitted: readonly SequenceSlot[],
  ) {}

  /** The slots, in sequence order, whose requests run this step; their adapter's set is applied to the context. */
  slotsForStep(slots: readonly SequenceSlot[]): SequenceSlot[] {
    this.steps++;
    const work: AdapterWork[] = [];
    const bySeen = new Map<number, ActiveRequest>();
    for (const slot of this.admitted) {
      const active = slot.active!;
      if (bySeen.has(active.adapterId)) continue;
      bySeen.set(active.adapterId, active);
      if (!this.since.has(active.adapterId)) this.since.set(active.adapterId, this.steps);
      work.push({ adapter: active.adapterId, since: this.since.get(active.adapterId)! });
    }
    // an adapter with nothing admitted waits afresh from when it comes back
    for (const adapter of this.since.keys()) if (!bySeen.has(adapter)) this.since.delete(adapter);
    const chosen = chooseAdapterTurn(work, this.turn);
    if (chosen === undefined) return [];
    if (this.turn && this.turn.adapter !== chosen) this.switches++;
    this.turn = advanceTurn(this.turn, chosen);
    this.since.set(chosen, this.steps);
    this.adapters.apply(bySeen.get(chosen)!.adapter);
    return slots.filter((slot) => slot.active?.adapterId === chosen);
  }

  /** Whether the waiting request may take a sequence beside the adapters running now. */
  readonly mayAdmit = (active: ActiveRequest): boolean => mayAdmitAdapter(active.adapterId, this.runningAdapters(), this.adapters.maxLoras);

  /** The adapters of running and of waiting requests, by name (vLLM's lora_requests_info). */
  stats(): LoraAdapterStats {
    const names = (requests: Iterable<ActiveRequest>) => [...new Set([...requests].flatMap((active) => (active.adapter ? [active.adapter.name] : [])))];
    return { maxLoras: this.adapters.maxLoras, running: names(this.admitted.map((slot) => slot.active!)), waiting: names(this.queue) };
  }

  /** The disk store of an adapter's states, once open; undefined once the adapter is freed (the old store's writes finish first). */
  attachDisk(adapter: number, store: DiskPromptStore | undefined): void {
    const disks = this.memory.adapterDisks;
    const old = disks.get(adapter);
    if (old && old !== store) void old.flush().then(() => old.close());
    if (store) disks.set(adapter, store);
    else disks.delete(adapter);
  }

  /** Frees the unloaded adapters no request uses any more, and closes their disk stores. */
  freeUnused(): ServedAdapter[] {
    if (!this.adapters.hasRetired) return [];
    const inUse = new Set([...this.queue.map((active) => active.adapterId), ...this.runningAdapters()]);
    const freed = this.adapters.freeUnused(inUse);
    for (const adapter of freed) this.attachDisk(adapter.id, undefined);
    return freed;
  }

  private runningAdapters(): Set<number> {
    return new Set(this.admitted.map((slot) => slot.active!.adapterId));
  }
}
