// Speculation.plan without a model: which generating sequences draft in a step and how far, with a
// drafter that proposes fixed drafts. Lockstep (recurrent and hybrid targets) drafts for all or none,
// every draft cut to the shortest, because llama.cpp splits such a batch by sequence.
import { describe, expect, test } from "bun:test";
import { ActiveRequest, SequenceSlot } from "../../src/engine/sequence.ts";
import { Speculation } from "../../src/engine/speculative/speculation.ts";
import type { Drafter, DraftRequest } from "../../src/engine/speculative/drafter.ts";

/** Proposes `lengths[seq]` tokens (at most the request's max) for each sequence, and records what it was asked. */
class FixedDrafter implements Drafter {
  asked: DraftRequest[][] = [];
  constructor(private readonly lengths: number[]) {}
  draft(requests: DraftRequest[]): number[][] {
    this.asked.push(requests.map((r) => ({ ...r })));
    return requests.map((r) => Array.from({ length: Math.min(r.max, this.lengths[r.seq]!) }, (_, i) => 100 + i));
  }
  forget(): void {}
  dispose(): void {}
}

let requestCount = 0;
/** Puts a new request, its prompt decoded, into the slot. */
function startRequest(slot: SequenceSlot): ActiveRequest {
  const active = new ActiveRequest({ id: `r${++requestCount}`, prompt: [1, 2, 3], maxTokens: 100 }, Int32Array.from([1, 2, 3]), () => {});
  active.nextPromptIndex = 3;
  active.pendingToken = 7;
  slot.cached = [1, 2, 3];
  slot.active = active;
  return active;
}

function generatingSlots(count: number): SequenceSlot[] {
  return Array.from({ length: count }, (_, seq) => {
    const slot = new SequenceSlot(seq);
    startRequest(slot);
    return slot;
  });
}

const lengths = (planned: Map<SequenceSlot, number[]>, slots: SequenceSlot[]) => slots.map((s) => planned.get(s)?.length ?? 0);

describe("Speculation.plan", () => {
  test("each sequence drafts as far as its drafter proposes when batches are not split by sequence", () => {
    const slots = generatingSlots(3);
    const speculation = new Speculation(new FixedDrafter([4, 1, 2]), 4, "draft");
    expect(lengths(speculation.plan(slots, 512, 1024), slots)).toEqual([4, 1, 2]);
  });

  test("lockstep: every draft is cut to the shortest", () => {
    const slots = generatingSlots(3);
    const speculation = new Speculation(new FixedDrafter([4, 1, 2]), 4, "draft", undefined, true);
    expect(lengths(speculation.plan(slots, 512, 1024), slots)).toEqual([1, 1, 1]);
  });

  test("lockstep: when one sequence proposes nothing, none drafts", () => {
    const slots = generatingSlots(3);
    const speculation = new Speculation(new FixedDrafter([4, 0, 2]), 4, "ngram", undefined, true);
    expect(speculation.plan(slots, 512, 1024).size).toBe(0);
  });

  test("lockstep: a sequence in back-off keeps the others from drafting, and the drafter is not asked", () => {
    const slots = generatingSlots(2);
    const drafter = new FixedDrafter([4, 4]);
    const speculation = new Speculation(drafter, 4, "draft", undefined, true);
    speculation.plan(slots, 512, 1024);
    // a fruitless round pauses sequence 0 only
    speculation.settle(slots[0]!.active!, 4, 0);
    speculation.settle(slots[1]!.active!, 4, 4);
    drafter.asked = [];
    expect(speculation.plan(slots, 512, 1024).size).toBe(0);
    expect(drafter.asked).toHaveLength(0);
    // without lockstep the other one drafts on
    const free = new Speculation(new FixedDrafter([4, 4]), 4, "draft");
    free.plan(slots, 512, 1024);
    free.settle(slots[0]!.active!, 4, 0);
    expect(lengths(free.plan(slots, 512, 1024), slots)).toEqual([0, 4]);
  });

  test("lockstep: the drafter is asked for the shortest length any sequence may take", () => {
    const slots = generatingSlots(2);
    slots[1]!.active!.generated = 97; // three tokens left before max_tokens: the pending one and at most two drafted
    const drafter = new FixedDrafter([4, 4]);
    const speculation = new Speculation(drafter, 4, "draft", undefined, true);
    expect(lengths(speculation.plan(slots, 512, 1024), slots)).toEqual([2, 2]);
    expect(drafter.asked[0]!.map((r) => r.max)).toEqual([2, 2]);
  });

  test("with a draft model a fruitless round carries over: new requests wait until the engine has generated its pause, then draft at its length", () => {
    const [slot, other] = generatingSlots(2);
    const speculation = new Speculation(new FixedDrafter([4, 4]), 4, "draft");
    expect(speculation.plan([slot!], 512, 1024).size).toBe(1);
    speculation.settle(slot!.active!, 4, 0); // pauses 16 tokens
    startRequest(slot!);
    expect(speculation.plan([slot!], 512, 1024).size).toBe(0);
    // another sequence generating counts too: 16 tokens from the round on, a new request drafts again
    for (let step = 0; step < 7; step++) speculation.plan([other!], 512, 1024);
    startRequest(slot!);
    expect(speculation.plan([slot!], 512, 1024).size).toBe(0);
    for (let step = 0; step < 8; step++) speculation.plan([other!], 512, 1024);
    const next = startRequest(slot!);
    // with the draft length the fruitless round left (accepted + 1)
    expect(lengths(speculation.plan([slot!], 512, 1024), [slot!])).toEqual([1]);
    // a round that accepts at least half lets new requests draft at once
    speculation.settle(next, 4, 3);
    startRequest(slot!);
    expect(speculation.plan([slot!], 512, 1024).size).toBe(1);
  });

  test("with n-gram lookup every request starts drafting at once (its matches depend on its own prompt)", () => {
    const [slot] = generatingSlots(1);
    const speculation = new Speculation(new FixedDrafter([4]), 4, "ngram");
    speculation.plan([slot!], 512, 1024);
    speculation.settle(slot!.active!, 4, 0);
    startRequest(slot!);
    expect(speculation.plan([slot!], 512, 1024).size).toBe(1);
  });

  test("a drafter that throws costs the step its drafts, not the engine", () => {
    const slots = generatingSlots(2);
    const forgotten: number[] = [];
    const failing: Drafter = {
      draft: () => { throw new RangeError("broken drafter"); },
      forget: (seq) => { forgotten.push(seq); },
      dispose: () => {},
    };
    const speculation = new Speculation(failing, 4, "draft");
    expect(speculation.plan(slots, 512, 1024).size).toBe(0);
    expect(forgotten.sort()).toEqual([0, 1]);
  });
});
