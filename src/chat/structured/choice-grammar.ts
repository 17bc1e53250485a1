// Strings as a GBNF expression that writes each shared prefix once (a radix tree): llama.cpp keeps one
// parse stack per live alternative and checks every candidate token against each, so ["option 1", …,
// "option 8000"] as one flat alternation costs 8,000 stacks at every step, while the tree keeps at most
// one branch per distinct next character. A `choice` constraint and a JSON schema's `enum` are such
// trees; so is the list of tools a forced call picks from, where each name is followed by that tool's
// own arguments.
import { alternatives, literal } from "./gbnf.ts";
import { StructuredOutputError } from "./errors.ts";
import { DEFAULT_GRAMMAR_LIMITS } from "./grammar-bounds.ts";

/** A string of the tree and what the grammar expects after it (a GBNF expression; "" for nothing). */
export interface PrefixTreeEntry {
  text: string;
  then: string;
}

interface TrieNode {
  /** What may follow when a string ends here; empty when none ends here. */
  endings: Set<string>;
  children: Map<string, TrieNode>;
}

const newNode = (): TrieNode => ({ endings: new Set(), children: new Map() });

/** Names the strings in the error when the tree branches deeper than groups may nest. */
export interface PrefixTreeLabel {
  /** "the choice's options", "the tool names" */
  what: string;
  /** StructuredOutputError's keyword: the request field they come from. */
  keyword: string;
}

/** The entries as one expression. */
export function prefixTreeGrammar(entries: PrefixTreeEntry[], label: PrefixTreeLabel): string {
  const root = newNode();
  for (const { text, then } of entries) {
    let node = root;
    for (const char of text) {
      let next = node.children.get(char);
      if (!next) node.children.set(char, (next = newNode()));
      node = next;
    }
    node.endings.add(then);
  }
  return expression(root, 0, label);
}

export function choiceGrammar(choices: string[]): string {
  return prefixTreeGrammar(choices.map((text) => ({ text, then: "" })), { what: "the choice's options", keyword: "choice" });
}

/** What follows a node where a string ends: its endings, one of them, or the empty literal. */
function ending(node: TrieNode): string {
  const endings = [...node.endings].map((then) => then || '""');
  return alternatives(endings);
}

/** The strings below `node`; each branch point is one group, so depth counts branch points. */
function expression(node: TrieNode, depth: number, label: PrefixTreeLabel): string {
  if (depth > DEFAULT_GRAMMAR_LIMITS.maxDepth) {
    throw new StructuredOutputError(`Cannot constrain output to ${label.what}: they branch more than ${DEFAULT_GRAMMAR_LIMITS.maxDepth} times along one of them`, label.keyword);
  }
  const branches: string[] = [];
  if (node.endings.size > 0) branches.push(ending(node));
  for (const [char, child] of node.children) {
    // Follow a run of single-child nodes where nothing ends into one literal.
    let text = char;
    let tail = child;
    while (tail.endings.size === 0 && tail.children.size === 1) {
      const [nextChar, nextNode] = tail.children.entries().next().value!;
      text += nextChar;
      tail = nextNode;
    }
    const rest = tail.children.size === 0 ? ending(tail) : expression(tail, depth + 1, label);
    branches.push(rest === '""' ? literal(text) : `${literal(text)} ${rest}`);
  }
  return branches.length === 1 ? branches[0]! : `(${branches.join(" | ")})`;
}
