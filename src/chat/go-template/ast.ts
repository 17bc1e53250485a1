// The parse tree of a Go template, shaped like text/template/parse's nodes.

/** One word of a command: what it evaluates to. */
export type Operand =
  | { type: "field"; names: string[]; offset: number }
  | { type: "variable"; name: string; fields: string[]; offset: number }
  | { type: "dot"; offset: number }
  | { type: "function"; name: string; offset: number }
  | { type: "chain"; base: Operand; fields: string[]; offset: number }
  | { type: "pipeline"; pipe: Pipeline; offset: number }
  | { type: "constant"; value: string | number | boolean; offset: number }
  | { type: "nil"; offset: number };

export interface Command {
  args: Operand[];
  offset: number;
}

/** `$x := a | b c`: optional variable declarations (or assignment), then commands joined by pipes. */
export interface Pipeline {
  declarations: string[];
  isAssign: boolean;
  commands: Command[];
  offset: number;
}

export type Node =
  | { type: "text"; text: string; offset: number }
  | { type: "action"; pipe: Pipeline; offset: number }
  | BranchNode
  | { type: "template"; name: string; pipe?: Pipeline; offset: number }
  | { type: "break" | "continue"; offset: number };

/** if, with and range: a pipeline, the nodes run when it holds, and those run otherwise. */
export interface BranchNode {
  type: "if" | "with" | "range";
  pipe: Pipeline;
  list: Node[];
  elseList?: Node[];
  offset: number;
}

export interface TemplateTree {
  root: Node[];
  /** {{ define }} and {{ block }} bodies by name. */
  defines: Map<string, Node[]>;
}
