/**
 * Streaming stop-string detection (OpenAI `stop`, vLLM `stop` +
 * `include_stop_str_in_output`).
 *
 * Generated text arrives a token at a time and a stop string may be spread
 * over many tokens ("</s" + "to" + "p>"). Text is only emitted once it can no
 * longer be part of a stop, so nothing is ever emitted and later retracted.
 *
 * Matching uses an Aho-Corasick automaton over UTF-16 code units. Its state
 * is the longest suffix of the stream that is a prefix of some stop, and that
 * suffix is exactly what must be held back: any stop that completes later
 * must start inside it. So per push the work is linear in the pushed text and
 * the held-back text is shorter than the longest stop, however long the
 * generation. It also handles the case where a failed partial match hides the
 * start of a real one (stop "aab" in "aaab") without rescanning.
 *
 * Which stop wins: the first one to complete in the stream. Generation must
 * end as soon as a stop has appeared, so we never wait to see whether a
 * longer stop that started earlier might complete too (stops "bc" and "abcd"
 * on "abcd" match "bc" after "abc"). Of stops completing at the same
 * character, the longest one (earliest start) wins, which emits the least
 * text. Two stops starting at the same position means one is a prefix of the
 * other, so the shorter one completes first and wins. The result does not
 * depend on how the text is split into pushes.
 */

export interface StopMatch {
  /** Index of the matched stop in the `stops` array given to the constructor. */
  index: number;
  /** The stop string that matched. */
  stop: string;
}

export interface StopPushResult {
  /** Text that is safe to emit now (may be ""). */
  text: string;
  /** Set when a stop string completed; `text` then ends before it (or with it, see includeStopString). */
  stop?: StopMatch;
}

export interface StopStringOptions {
  /** Put the matched stop string at the end of the emitted text (vLLM's include_stop_str_in_output). */
  includeStopString?: boolean;
}

interface TrieNode {
  next: Map<number, TrieNode>;
  /** Node of the longest proper suffix of this node's string that is also in the trie. */
  fail: TrieNode;
  /** Length of this node's string (= how much to hold back while here). */
  depth: number;
  /** Index of the longest stop ending here or at a suffix of here, -1 if none. */
  match: number;
}

export class StopStringMatcher {
  private readonly stops: readonly string[];
  private readonly includeStopString: boolean;
  private readonly root: TrieNode;
  private state: TrieNode;
  private held = "";
  private matched: StopMatch | undefined;
  private finished = false;

  constructor(stops: readonly string[], options: StopStringOptions = {}) {
    this.stops = [...stops];
    this.includeStopString = options.includeStopString ?? false;
    this.root = buildAutomaton(this.stops);
    this.state = this.root;
  }

  /** The stop that ended the stream, if any. */
  get stopped(): StopMatch | undefined {
    return this.matched;
  }

  /** Feeds more generated text; returns what can be emitted now. Throws after a stop or flush. */
  push(text: string): StopPushResult {
    if (this.finished) {
      throw new Error(this.matched ? "StopStringMatcher: push after a stop string matched" : "StopStringMatcher: push after flush");
    }
    const buffer = this.held + text;
    const offset = this.held.length;
    let state = this.state;
    for (let i = 0; i < text.length; i++) {
      const unit = text.charCodeAt(i);
      let next = state.next.get(unit);
      while (next === undefined && state !== this.root) {
        state = state.fail;
        next = state.next.get(unit);
      }
      state = next ?? this.root;
      if (state.match !== -1) {
        const stop = this.stops[state.match] as string;
        const end = offset + i + 1;
        this.finished = true;
        this.held = "";
        this.matched = { index: state.match, stop };
        return { text: buffer.slice(0, this.includeStopString ? end : end - stop.length), stop: { ...this.matched } };
      }
    }
    this.state = state;
    const emitLength = buffer.length - state.depth;
    this.held = buffer.slice(emitLength);
    return { text: buffer.slice(0, emitLength) };
  }

  /** Generation ended without a stop (EOS, max tokens): returns the held-back text. Idempotent. */
  flush(): string {
    const rest = this.held;
    this.held = "";
    this.state = this.root;
    this.finished = true;
    return rest;
  }
}

function buildAutomaton(stops: readonly string[]): TrieNode {
  const root: TrieNode = { next: new Map(), fail: undefined as unknown as TrieNode, depth: 0, match: -1 };
  root.fail = root;
  const endsAt = new Map<TrieNode, number>();
  stops.forEach((stop, index) => {
    if (stop === "") return; // an empty stop would match before any text
    let node = root;
    for (let i = 0; i < stop.length; i++) {
      const unit = stop.charCodeAt(i);
      let child = node.next.get(unit);
      if (child === undefined) {
        child = { next: new Map(), fail: root, depth: node.depth + 1, match: -1 };
        node.next.set(unit, child);
      }
      node = child;
    }
    if (!endsAt.has(node)) endsAt.set(node, index); // duplicates: report the first
  });
  // Breadth-first, so a node's fail target (shallower) is finished before it.
  const queue: TrieNode[] = [root];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head] as TrieNode;
    for (const [unit, child] of node.next) {
      let fail = node.fail;
      while (fail !== root && !fail.next.has(unit)) fail = fail.fail;
      child.fail = node === root ? root : (fail.next.get(unit) ?? root);
      // A stop ending here is longer than any ending at a suffix of here.
      child.match = endsAt.get(child) ?? child.fail.match;
      queue.push(child);
    }
  }
  return root;
}
