// Bounds on a GBNF grammar, checked before llama.cpp's parser sees it. That parser recurses once per
// nested group (20,000 nested parentheses crashed the engine with SIGSEGV) and expands `x{m,n}` into
// copies (a long literal repeated 2,000 times, which its own repetition cap allows, is gigabytes).
// Sampling under a grammar checks every candidate token against every live parse stack, so its cost
// grows with the stacks an alternation opens at once: a 2,000-way choice slowed every sequence on the
// model for seconds per token, and rules that each double the stacks (r0 ::= r1 | r1 "x", r1 ::= …)
// grow them exponentially. One linear scan, without recursion, reads the text into a small rule graph;
// then the stacks each rule can open are counted, so raw and generated grammars are bounded alike.
import { StructuredOutputError } from "./errors.ts";

export interface GrammarLimits {
  /** Characters of grammar text. */
  maxChars: number;
  /** Nesting of parenthesised groups. */
  maxDepth: number;
  /** Alternatives (`a | b | …`) in one rule body or one group. */
  maxAlternatives: number;
  /**
   * Parse stacks one rule or group can open when the parser enters it (its alternatives, through the
   * rules they start with). Sampling cost per token grows with this number.
   */
  maxParseStacks: number;
  /**
   * Grammar elements once repetitions are expanded as llama.cpp expands them: x{3} is three copies of
   * x, a literal is one element per character, a group is a rule of its own (one element where used).
   */
  maxExpandedElements: number;
}

export const DEFAULT_GRAMMAR_LIMITS: Readonly<GrammarLimits> = {
  maxChars: 1024 * 1024, maxDepth: 100, maxAlternatives: 128, maxParseStacks: 128, maxExpandedElements: 500_000,
};

/** Rules that start with rules may chain this deep; counting stacks follows the chain. */
const MAX_RULE_CHAIN = 1000;

interface Item {
  /** A rule name, a group, or nothing (a terminal). */
  ref?: string;
  group?: RuleNode;
  /** Followed by `*`, `?` or `{0,…}`, or the empty literal: the parser may step over it. */
  optional: boolean;
}
interface RuleNode {
  alternatives: Item[][];
  /** Expanded elements of the body (repetitions multiplied). */
  weight: number;
}

const refuse = (message: string) => new StructuredOutputError(`Cannot use grammar: ${message}`, "grammar");
const newNode = (): RuleNode => ({ alternatives: [[]], weight: 0 });

/** Throws StructuredOutputError (a 400) when the grammar passes a bound; says nothing about its syntax. */
export function checkGrammarBounds(grammar: string, limits: Readonly<GrammarLimits> = DEFAULT_GRAMMAR_LIMITS): void {
  if (grammar.length > limits.maxChars) throw refuse(`it is ${grammar.length} characters long, more than ${limits.maxChars}`);
  const rules = new Map<string, RuleNode>();
  const nodes: RuleNode[] = [];
  const open: RuleNode[] = [newNode()];
  nodes.push(open[0]!);
  let total = 0;
  /** The item just read and its element count, which a following `*`, `+`, `?` or `{m,n}` applies to. */
  let last: { item: Item; weight: number } | undefined;
  const current = () => open[open.length - 1]!;
  const addItem = (item: Item, weight: number) => {
    const node = current();
    node.alternatives[node.alternatives.length - 1]!.push(item);
    node.weight += weight;
    last = { item, weight };
  };
  const repeatLast = (factor: number, optional: boolean) => {
    if (!last) return;
    current().weight += last.weight * (factor - 1);
    last.weight *= factor;
    if (optional) last.item.optional = true;
    if (total + open.reduce((sum, node) => sum + node.weight, 0) > limits.maxExpandedElements) {
      throw refuse(`its repetitions expand to more than ${limits.maxExpandedElements} elements`);
    }
  };
  const closeGroup = () => {
    const group = open.pop()!;
    total += group.weight;
    addItem({ group, optional: false }, 1);
  };

  let i = 0;
  const n = grammar.length;
  while (i < n) {
    const ch = grammar[i]!;
    if (ch === "#") {
      while (i < n && grammar[i] !== "\n" && grammar[i] !== "\r") i++;
    } else if (ch === '"' || ch === "[") {
      const close = ch === '"' ? '"' : "]";
      let length = 0;
      i++;
      while (i < n && grammar[i] !== close) {
        i += grammar[i] === "\\" ? 2 : 1;
        length++;
      }
      i++;
      addItem({ optional: ch === '"' && length === 0 }, ch === '"' ? Math.max(1, length) : 1);
    } else if (ch === "<") {
      while (i < n && grammar[i] !== ">") i++;
      i++;
      addItem({ optional: false }, 1);
    } else if (ch === "(") {
      if (open.length > limits.maxDepth) throw refuse(`its groups nest more than ${limits.maxDepth} deep`);
      const group = newNode();
      nodes.push(group);
      open.push(group);
      last = undefined;
      i++;
    } else if (ch === ")") {
      if (open.length > 1) closeGroup();
      i++;
    } else if (ch === "|") {
      const node = current();
      node.alternatives.push([]);
      if (node.alternatives.length > limits.maxAlternatives) {
        throw refuse(`one of its alternations has more than ${limits.maxAlternatives} alternatives (write shared prefixes once, or constrain less)`);
      }
      last = undefined;
      i++;
    } else if (ch === "*" || ch === "+" || ch === "?") {
      // llama.cpp writes S* as a new rule S' ::= S S' | (one copy), S+ as S S' (two), S? as S' ::= S | (one).
      repeatLast(ch === "+" ? 2 : 1, ch !== "+");
      i++;
    } else if (ch === "{") {
      const end = grammar.indexOf("}", i);
      const counts = grammar.slice(i + 1, end < 0 ? n : end).split(",").map((part) => (part.trim() === "" ? undefined : Number(part.trim())));
      const [min, max] = counts.length === 1 ? [counts[0], counts[0]] : [counts[0], counts[1]];
      const factor = Math.max(1, max ?? (min ?? 0) + 1);
      repeatLast(Number.isFinite(factor) ? factor : Infinity, !min);
      i = end < 0 ? n : end + 1;
    } else if (ch === ":" && grammar.startsWith("::=", i) && open.length === 1) {
      // A new rule: the name just read belongs to it, not to the previous rule's body.
      const previous = open[0]!;
      const sequence = previous.alternatives[previous.alternatives.length - 1]!;
      const name = last && sequence.at(-1) === last.item ? last.item.ref : undefined;
      if (name !== undefined) {
        sequence.pop();
        previous.weight -= 1;
      }
      total += previous.weight;
      const rule = newNode();
      nodes.push(rule);
      if (name !== undefined) rules.set(name, rule);
      open[0] = rule;
      last = undefined;
      i += 3;
    } else if (/[a-zA-Z0-9_-]/.test(ch)) {
      const start = i;
      while (i < n && /[a-zA-Z0-9_-]/.test(grammar[i]!)) i++;
      addItem({ ref: grammar.slice(start, i), optional: false }, 1);
    } else {
      if (ch === ".") addItem({ optional: false }, 1);
      i++;
    }
  }
  while (open.length > 1) closeGroup();
  if (total + open[0]!.weight > limits.maxExpandedElements) throw refuse(`its repetitions expand to more than ${limits.maxExpandedElements} elements`);
  checkParseStacks(nodes, rules, limits.maxParseStacks);
}

/**
 * Counts, for every rule and group, the parse stacks entering it opens: one per alternative, times
 * what the rule or group each alternative starts with opens (and the next item's too, when the first
 * may be skipped). Left recursion counts as one (llama.cpp refuses it anyway).
 */
function checkParseStacks(nodes: RuleNode[], rules: Map<string, RuleNode>, max: number): void {
  const stacks = new Map<RuleNode, number>();
  const nullable = new Map<RuleNode, boolean>();
  const target = (item: Item) => item.group ?? (item.ref !== undefined ? rules.get(item.ref) : undefined);
  const inProgress = new Set<RuleNode>();
  let depth = 0;

  const isNullable = (node: RuleNode): boolean => {
    const known = nullable.get(node);
    if (known !== undefined) return known;
    if (inProgress.has(node)) return false;
    enter(node);
    const result = node.alternatives.some((sequence) => sequence.every((item) => item.optional || (target(item) !== undefined && isNullable(target(item)!))));
    leave(node);
    nullable.set(node, result);
    return result;
  };
  const count = (node: RuleNode): number => {
    const known = stacks.get(node);
    if (known !== undefined) return known;
    if (inProgress.has(node)) return 1;
    enter(node);
    let sum = 0;
    for (const sequence of node.alternatives) {
      let opened = 0;
      let all = true;
      for (const item of sequence) {
        const next = target(item);
        opened += next ? count(next) : 1;
        if (!(item.optional || (next !== undefined && isNullable(next)))) {
          all = false;
          break;
        }
      }
      sum += opened + (all ? 1 : 0);
    }
    leave(node);
    const result = Math.min(sum, Number.MAX_SAFE_INTEGER);
    stacks.set(node, result);
    if (result > max) throw refuse(`one of its rules opens ${result} parse stacks at once, more than ${max} (every token is checked against each)`);
    return result;
  };
  function enter(node: RuleNode): void {
    if (++depth > MAX_RULE_CHAIN) throw refuse(`its rules start with rules more than ${MAX_RULE_CHAIN} deep`);
    inProgress.add(node);
  }
  function leave(node: RuleNode): void {
    depth--;
    inProgress.delete(node);
  }
  for (const node of nodes) count(node);
}
