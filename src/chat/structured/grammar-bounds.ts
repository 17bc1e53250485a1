// Bounds on a GBNF grammar, checked before llama.cpp's parser sees it: that parser recurses once per
// nested group (20,000 nested parentheses crash the engine with SIGSEGV), expands `x{m,n}` into copies
// (a long literal repeated 2,000 times, which llama.cpp's own repetition cap allows, is gigabytes), and grammar sampling costs grow with the width of an alternation
// (a 2,000-way choice slowed every sequence sharing the model). One linear scan, no recursion, measures
// all of these on the text itself, so a raw grammar and a generated one are bounded alike.
import { StructuredOutputError } from "./errors.ts";

export interface GrammarLimits {
  /** Characters of grammar text. */
  maxChars: number;
  /** Nesting of parenthesised groups. */
  maxDepth: number;
  /** Alternatives (`a | b | …`) in one rule body or one group. */
  maxAlternatives: number;
  /**
   * Grammar elements once repetitions are expanded as llama.cpp expands them: x{3} is three copies of
   * x, a literal is one element per character, a group is a rule of its own (one element where used).
   */
  maxExpandedElements: number;
}

export const DEFAULT_GRAMMAR_LIMITS: Readonly<GrammarLimits> = {
  maxChars: 1024 * 1024, maxDepth: 100, maxAlternatives: 512, maxExpandedElements: 500_000,
};

interface Group {
  /** Expanded elements inside the group so far. */
  weight: number;
  /** `|` seen in the group so far, plus one. */
  alternatives: number;
}

const refuse = (message: string) => new StructuredOutputError(`Cannot use grammar: ${message}`, "grammar");

/** Throws StructuredOutputError (a 400) when the grammar passes a bound; says nothing about its syntax. */
export function checkGrammarBounds(grammar: string, limits: Readonly<GrammarLimits> = DEFAULT_GRAMMAR_LIMITS): void {
  if (grammar.length > limits.maxChars) throw refuse(`it is ${grammar.length} characters long, more than ${limits.maxChars}`);
  const groups: Group[] = [{ weight: 0, alternatives: 1 }];
  let total = 0;
  /** Weight of the item just read, which a following `*`, `+`, `?` or `{m,n}` multiplies. */
  let last = 0;
  const addItem = (weight: number) => {
    groups[groups.length - 1]!.weight += weight;
    last = weight;
  };
  const multiplyLast = (factor: number) => {
    groups[groups.length - 1]!.weight += last * (factor - 1);
    last *= factor;
    if (total + groups.reduce((sum, g) => sum + g.weight, 0) > limits.maxExpandedElements) {
      throw refuse(`its repetitions expand to more than ${limits.maxExpandedElements} elements`);
    }
  };
  let i = 0;
  const n = grammar.length;
  while (i < n) {
    const ch = grammar[i]!;
    if (ch === "#") {
      while (i < n && grammar[i] !== "\n" && grammar[i] !== "\r") i++;
      continue;
    }
    if (ch === '"' || ch === "[") {
      const close = ch === '"' ? '"' : "]";
      let length = 0;
      i++;
      while (i < n && grammar[i] !== close) {
        i += grammar[i] === "\\" ? 2 : 1;
        length++;
      }
      i++;
      addItem(ch === '"' ? Math.max(1, length) : 1);
      continue;
    }
    if (ch === "<") {
      while (i < n && grammar[i] !== ">") i++;
      i++;
      addItem(1);
      continue;
    }
    if (ch === "(") {
      if (groups.length > limits.maxDepth) throw refuse(`its groups nest more than ${limits.maxDepth} deep`);
      groups.push({ weight: 0, alternatives: 1 });
      i++;
      continue;
    }
    if (ch === ")") {
      if (groups.length > 1) addItemAfterPop(groups.pop()!);
      i++;
      continue;
    }
    if (ch === "|") {
      const group = groups[groups.length - 1]!;
      if (++group.alternatives > limits.maxAlternatives) {
        throw refuse(`one of its alternations has more than ${limits.maxAlternatives} alternatives (write shared prefixes once, or constrain less)`);
      }
      last = 0;
      i++;
      continue;
    }
    if (ch === "*" || ch === "+" || ch === "?") {
      // llama.cpp writes S* as a new rule S' ::= S S' | (one copy), S+ as S S' (two), S? as S' ::= S | (one).
      multiplyLast(ch === "+" ? 2 : 1);
      i++;
      continue;
    }
    if (ch === "{") {
      const end = grammar.indexOf("}", i);
      const counts = grammar.slice(i + 1, end < 0 ? n : end).split(",").map((part) => (part.trim() === "" ? undefined : Number(part.trim())));
      const [min, max] = counts.length === 1 ? [counts[0], counts[0]] : [counts[0], counts[1]];
      const factor = Math.max(1, max ?? (min ?? 0) + 1);
      multiplyLast(Number.isFinite(factor) ? factor : Infinity);
      i = end < 0 ? n : end + 1;
      continue;
    }
    if (ch === ":" && grammar.startsWith("::=", i) && groups.length === 1) {
      // A new rule: its body is a fresh top-level alternation; the name before it was no item.
      total += Math.max(0, groups[0]!.weight - 1);
      groups[0] = { weight: 0, alternatives: 1 };
      last = 0;
      i += 3;
      continue;
    }
    if (ch === ".") {
      addItem(1);
      i++;
      continue;
    }
    if (/[a-zA-Z0-9_-]/.test(ch)) {
      while (i < n && /[a-zA-Z0-9_-]/.test(grammar[i]!)) i++;
      addItem(1);
      continue;
    }
    if (ch === "!" || ch === " " || ch === "\t" || ch === "\n" || ch === "\r") {
      i++;
      continue;
    }
    i++;
  }
  while (groups.length > 1) addItemAfterPop(groups.pop()!);
  if (total + groups[0]!.weight > limits.maxExpandedElements) throw refuse(`its repetitions expand to more than ${limits.maxExpandedElements} elements`);

  /** llama.cpp makes a group a rule of its own: its elements count once, and the group is one reference. */
  function addItemAfterPop(group: Group): void {
    total += group.weight;
    addItem(1);
  }
}
