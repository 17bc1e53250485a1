// A `choice` constraint as a GBNF expression that writes each shared prefix once (a radix tree):
// llama.cpp keeps one parse stack per live alternative and checks every candidate token against each,
// so ["option 1", …, "option 8000"] as one flat alternation costs 8,000 stacks at every step, while the
// tree keeps at most one branch per distinct next character.
import { literal } from "./gbnf.ts";
import { StructuredOutputError } from "./errors.ts";
import { DEFAULT_GRAMMAR_LIMITS } from "./grammar-bounds.ts";

interface TrieNode {
  terminal: boolean;
  children: Map<string, TrieNode>;
}

export function choiceGrammar(choices: string[]): string {
  const root: TrieNode = { terminal: false, children: new Map() };
  for (const choice of new Set(choices)) {
    let node = root;
    for (const char of choice) {
      let next = node.children.get(char);
      if (!next) node.children.set(char, (next = { terminal: false, children: new Map() }));
      node = next;
    }
    node.terminal = true;
  }
  return expression(root, 0);
}

/** The strings below `node`; each branch point is one group, so depth counts branch points. */
function expression(node: TrieNode, depth: number): string {
  if (depth > DEFAULT_GRAMMAR_LIMITS.maxDepth) {
    throw new StructuredOutputError(`Cannot use choice: its options branch more than ${DEFAULT_GRAMMAR_LIMITS.maxDepth} times along one option`, "choice");
  }
  const branches: string[] = [];
  if (node.terminal) branches.push('""');
  for (const [char, child] of node.children) {
    // Follow a run of single-child, non-terminal nodes into one literal.
    let text = char;
    let tail = child;
    while (!tail.terminal && tail.children.size === 1) {
      const [nextChar, nextNode] = tail.children.entries().next().value!;
      text += nextChar;
      tail = nextNode;
    }
    const rest = tail.children.size === 0 ? "" : expression(tail, depth + 1);
    branches.push(rest ? `${literal(text)} ${rest}` : literal(text));
  }
  return branches.length === 1 ? branches[0]! : `(${branches.join(" | ")})`;
}
