// Tree rewrites Ollama applies to legacy templates (those over .System, .Prompt and .Response):
// a {{ .Response }} appended when the template has none, and, for the turn being generated, the
// template cut after its {{ .Response }} so that nothing the model should write is in the prompt.
import type { Node, Operand, Pipeline } from "./ast.ts";

/** The root with `{{ .Response }}` appended at `offset` (the end of the source). */
export function withResponseAppended(root: Node[], offset: number): Node[] {
  const pipe: Pipeline = { declarations: [], isAssign: false, commands: [{ args: [{ type: "field", names: ["Response"], offset }], offset }], offset };
  return [...root, { type: "action", pipe, offset }];
}

/**
 * Drops everything that follows the first `.Response` field in walk order, as Ollama's deleteNode
 * does: the field's action stays, later text and actions go, branches keep what precedes it. Branch
 * conditions are not searched for the field, and a command left without arguments takes its whole
 * action with it.
 */
export function cutAfterResponse(root: Node[]): Node[] {
  let cut = false;

  const list = (nodes: Node[]): Node[] => {
    const kept: Node[] = [];
    for (const node of nodes) {
      const rewritten = visitNode(node);
      if (rewritten) kept.push(rewritten);
    }
    return kept;
  };

  const visitNode = (node: Node): Node | undefined => {
    if (cut) return undefined;
    switch (node.type) {
      case "action": {
        const pipe = visitPipe(node.pipe);
        return pipe && { ...node, pipe };
      }
      case "if":
      case "with":
      case "range": {
        const body = list(node.list);
        const elseList = node.elseList && (cut ? [] : list(node.elseList));
        return { ...node, list: body, ...(elseList ? { elseList } : {}) };
      }
      default:
        return node;
    }
  };

  const visitPipe = (pipe: Pipeline): Pipeline | undefined => {
    if (cut) return undefined;
    const commands = [];
    for (const command of pipe.commands) {
      const args: Operand[] = [];
      for (const arg of command.args) {
        const rewritten = visitOperand(arg);
        if (rewritten) args.push(rewritten);
      }
      if (args.length === 0) return undefined;
      commands.push({ ...command, args });
    }
    return { ...pipe, commands };
  };

  const visitOperand = (operand: Operand): Operand | undefined => {
    if (operand.type === "field" && operand.names.includes("Response")) {
      cut = true;
      return operand;
    }
    if (cut) return undefined;
    if (operand.type !== "pipeline") return operand;
    const pipe = visitPipe(operand.pipe);
    return pipe && { ...operand, pipe };
  };

  return list(root);
}
