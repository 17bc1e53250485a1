// A parsed Go text/template: parse once, execute many times over different data.
import type { Node, Operand, Pipeline, TemplateTree } from "./ast.ts";
import { DEFAULT_TEMPLATE_LIMITS, executeTree, type OutputPart, type TemplateLimits } from "./executor.ts";
import { BUILTIN_FUNCTIONS, type TemplateFunction } from "./functions.ts";
import { parseTemplate } from "./parser.ts";

export class GoTemplate {
  private constructor(readonly source: string, readonly tree: TemplateTree) {}

  /** Throws TemplateSyntaxError (a SyntaxError with line and column) when the text is not a valid template. */
  static parse(source: string): GoTemplate {
    return new GoTemplate(source, parseTemplate(source));
  }

  /** The same template with another root (a rewritten copy of this one's tree). */
  withRoot(root: Node[]): GoTemplate {
    return new GoTemplate(this.source, { root, defines: this.tree.defines });
  }

  /**
   * Runs the template; throws TemplateExecutionError with the position of the failing action, and
   * TemplateLimitError when it passes one of `limits`.
   */
  execute(data: unknown, functions: Readonly<Record<string, TemplateFunction>> = BUILTIN_FUNCTIONS, limits: Readonly<TemplateLimits> = DEFAULT_TEMPLATE_LIMITS): string {
    return this.executeParts(data, functions, limits).map((part) => part.text).join("");
  }

  /** The output split into template text and values read from the data. */
  executeParts(data: unknown, functions: Readonly<Record<string, TemplateFunction>> = BUILTIN_FUNCTIONS, limits: Readonly<TemplateLimits> = DEFAULT_TEMPLATE_LIMITS): OutputPart[] {
    return executeTree(this.tree, this.source, data, functions, limits);
  }

  /**
   * Every field and variable name the root mentions, lower-cased and sorted (Ollama's Vars): how a
   * caller tells a template over .Messages from one over .Prompt and .Response.
   */
  identifiers(): string[] {
    const names = new Set<string>();
    const fromOperand = (operand: Operand): void => {
      if (operand.type === "field") operand.names.forEach((name) => names.add(name.toLowerCase()));
      else if (operand.type === "variable") [operand.name, ...operand.fields].forEach((name) => names.add(name.toLowerCase()));
      else if (operand.type === "pipeline") fromPipe(operand.pipe);
    };
    const fromPipe = (pipe: Pipeline | undefined) => pipe?.commands.forEach((command) => command.args.forEach(fromOperand));
    const fromNodes = (nodes: Node[]): void => {
      for (const node of nodes) {
        if (node.type === "action" || node.type === "template") fromPipe(node.pipe);
        else if (node.type === "if" || node.type === "with" || node.type === "range") {
          fromPipe(node.pipe);
          fromNodes(node.list);
          if (node.elseList) fromNodes(node.elseList);
        }
      }
    };
    fromNodes(this.tree.root);
    return [...names].sort();
  }
}
