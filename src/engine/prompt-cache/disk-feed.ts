// What the engine hands the disk tier on its own, beside the states it writes as they leave host memory:
// when it has nothing else to do, idle sequences' memory (and a recurrent checkpoint kept beside it) and
// host-cached states the tier lacks, so that what a session leaves behind survives a restart.
import type { LlamaContext } from "../../../ffi/llama.ts";
import type { SequenceSlot } from "../sequence.ts";
import type { PromptCacheEntry } from "./host-cache.ts";
import type { DiskPromptStore } from "./disk-store.ts";

/** Queues a host-cached state for its adapter's disk store when that lacks it. True when queued. */
export function spillEntry(entry: PromptCacheEntry, disk: DiskPromptStore | undefined): boolean {
  if (entry.onDisk || !disk) return false;
  entry.onDisk = true;
  return disk.enqueue({ tokens: entry.tokens, state: entry.state, logits: entry.logits, session: entry.session, marks: entry.marks });
}

/** Queues the idle slots' memory the disk tier lacks (`diskFor`: an adapter's store). Returns the states queued. */
export function persistIdleSlots(slots: readonly SequenceSlot[], context: LlamaContext, diskFor: (adapter: number) => DiskPromptStore | undefined): number {
  let queued = 0;
  for (const slot of slots) {
    const disk = diskFor(slot.adapterId);
    if (slot.active || !disk) continue;
    // a recurrent checkpoint serves a next turn whose reply was rendered otherwise than it was generated
    const checkpoint = slot.checkpoint;
    if (checkpoint && checkpoint.length < slot.cached.length && disk.wants(slot.cached.slice(0, checkpoint.length))) {
      const tokens = Int32Array.from(slot.cached.slice(0, checkpoint.length));
      if (disk.enqueue({ tokens, state: checkpoint.state, logits: checkpoint.logits, session: slot.session, marks: slot.marks })) queued++;
    }
    if (!disk.wants(slot.cached)) continue;
    const whole = checkpoint?.length === slot.cached.length ? checkpoint : undefined;
    const state = whole?.state ?? context.saveSequence(slot.seq);
    if (disk.enqueue({ tokens: Int32Array.from(slot.cached), state, logits: whole?.logits, session: slot.session, marks: slot.marks })) queued++;
  }
  return queued;
}
