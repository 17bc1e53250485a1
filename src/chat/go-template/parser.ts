// Builds the parse tree from tokens, following text/template/parse: actions, pipelines with
// declarations, if/else if/with/range/else/end, break/continue, define/template/block.
import type { Command, Node, Operand, Pipeline, TemplateTree } from "./ast.ts";
import { TemplateSyntaxError, positionOf } from "./errors.ts";
import { lex, type Token } from "./lexer.ts";

const KEYWORDS = new Set(["if", "else", "end", "range", "with", "define", "template", "block", "break", "continue"]);
type ListEnd = { kind: "end" | "else"; offset: number };

export function parseTemplate(source: string): TemplateTree {
  return new Parser(source).parse();
}

class Parser {
  private readonly tokens: Token[];
  private pos = 0;
  private readonly vars: string[] = ["$"];
  private rangeDepth = 0;
  private readonly defines = new Map<string, Node[]>();

  constructor(private readonly source: string) {
    this.tokens = lex(source);
  }

  parse(): TemplateTree {
    const root: Node[] = [];
    while (this.peek()) {
      if (this.isAction("define")) {
        this.define();
        continue;
      }
      const node = this.textOrAction();
      if (!("type" in node)) this.fail(`unexpected {{${node.kind}}}`, node.offset);
      root.push(node as Node);
    }
    return { root, defines: this.defines };
  }

  private fail(reason: string, offset: number): never {
    throw new TemplateSyntaxError(reason, positionOf(this.source, offset));
  }

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  private next(): Token {
    const token = this.tokens[this.pos++];
    if (!token) this.fail("unexpected end of template", this.source.length);
    return token!;
  }

  private skipSpace(): void {
    while (this.peek()?.kind === "space") this.pos++;
  }

  private nextNonSpace(): Token {
    this.skipSpace();
    return this.next();
  }

  private peekNonSpace(): Token | undefined {
    this.skipSpace();
    return this.peek();
  }

  private isKeyword(token: Token | undefined, word: string): boolean {
    return token?.kind === "identifier" && token.value === word;
  }

  /** Whether the next tokens open an action starting with `word`. */
  private isAction(word: string): boolean {
    if (this.peek()?.kind !== "open") return false;
    let i = this.pos + 1;
    while (this.tokens[i]?.kind === "space") i++;
    return this.isKeyword(this.tokens[i], word);
  }

  private expectClose(context: string): void {
    const token = this.nextNonSpace();
    if (token.kind !== "close") this.fail(`unexpected "${token.value}" in ${context}`, token.offset);
  }

  private textOrAction(): Node | ListEnd {
    const token = this.next();
    if (token.kind === "text") return { type: "text", text: token.value, offset: token.offset };
    if (token.kind !== "open") this.fail(`unexpected "${token.value}"`, token.offset);
    return this.action(token.offset);
  }

  private action(offset: number): Node | ListEnd {
    const word = this.peekNonSpace();
    if (word?.kind === "identifier" && KEYWORDS.has(word.value)) {
      this.next();
      switch (word.value) {
        case "end":
          this.expectClose("end");
          return { kind: "end", offset };
        case "else":
          // {{else if x}} and {{else with x}} leave the keyword pending for the enclosing control.
          if (this.isKeyword(this.peekNonSpace(), "if") || this.isKeyword(this.peekNonSpace(), "with")) return { kind: "else", offset };
          this.expectClose("else");
          return { kind: "else", offset };
        case "if":
        case "with":
        case "range":
          return this.control(word.value, offset);
        case "break":
        case "continue":
          if (this.rangeDepth === 0) this.fail(`{{${word.value}}} outside {{range}}`, word.offset);
          this.expectClose(word.value);
          return { type: word.value, offset };
        case "template":
          return this.templateCall(offset);
        case "block":
          return this.block(offset);
        default:
          this.fail(`unexpected "${word.value}"`, word.offset);
      }
    }
    return { type: "action", pipe: this.pipeline("command", "close"), offset };
  }

  /** Nodes up to a {{end}} or {{else}}, which is returned too. */
  private itemList(context: string): { list: Node[]; end: ListEnd } {
    const list: Node[] = [];
    for (;;) {
      if (!this.peek()) this.fail(`unexpected end of template in ${context}: missing {{end}}`, this.source.length);
      if (this.isAction("define")) this.fail("{{define}} is allowed only at the top level", this.peek()!.offset);
      const node = this.textOrAction();
      if ("kind" in node) return { list, end: node };
      list.push(node);
    }
  }

  private control(kind: "if" | "with" | "range", offset: number): Node {
    const scope = this.vars.length;
    const pipe = this.pipeline(kind, "close");
    if (kind === "range") this.rangeDepth++;
    const { list, end } = this.itemList(kind);
    if (kind === "range") this.rangeDepth--;
    let elseList: Node[] | undefined;
    if (end.kind === "else") {
      const chained = this.peek();
      if ((kind === "if" || kind === "with") && this.isKeyword(chained, kind)) {
        this.next();
        elseList = [this.control(kind, end.offset)];
      } else if (chained?.kind === "identifier" && (chained.value === "if" || chained.value === "with")) {
        this.fail(`{{else ${chained.value}}} cannot follow {{${kind}}}`, chained.offset);
      } else {
        const rest = this.itemList(kind);
        if (rest.end.kind !== "end") this.fail(`expected {{end}}, found {{else}}`, rest.end.offset);
        elseList = rest.list;
      }
    }
    this.vars.length = scope;
    return { type: kind, pipe, list, ...(elseList ? { elseList } : {}), offset };
  }

  private define(): void {
    const open = this.next();
    this.nextNonSpace(); // "define"
    const name = this.templateName("define");
    this.expectClose("define");
    const { list, end } = this.itemList("define");
    if (end.kind !== "end") this.fail("unexpected {{else}} in define", end.offset);
    if (this.defines.has(name)) this.fail(`template "${name}" defined twice`, open.offset);
    this.defines.set(name, list);
  }

  private templateName(context: string): string {
    const token = this.nextNonSpace();
    if (token.kind !== "string") this.fail(`${context} needs a quoted template name`, token.offset);
    return token.value;
  }

  private templateCall(offset: number): Node {
    const name = this.templateName("template");
    if (this.peekNonSpace()?.kind === "close") {
      this.next();
      return { type: "template", name, offset };
    }
    return { type: "template", name, pipe: this.pipeline("template", "close"), offset };
  }

  private block(offset: number): Node {
    const name = this.templateName("block");
    const pipe = this.pipeline("block", "close");
    const { list, end } = this.itemList("block");
    if (end.kind !== "end") this.fail("unexpected {{else}} in block", end.offset);
    this.defines.set(name, list);
    return { type: "template", name, pipe, offset };
  }

  private pipeline(context: string, endKind: "close" | "rightParen"): Pipeline {
    const start = this.peekNonSpace();
    const pipe: Pipeline = { declarations: [], isAssign: false, commands: [], offset: start?.offset ?? this.source.length };
    this.declarations(pipe, context);
    for (;;) {
      const token = this.nextNonSpace();
      if (token.kind === endKind) break;
      if (token.kind === "close" || token.kind === "rightParen") this.fail(`unexpected "${token.value}" in ${context}`, token.offset);
      this.pos--;
      pipe.commands.push(this.command());
    }
    if (pipe.commands.length === 0) this.fail(`missing value for ${context}`, pipe.offset);
    pipe.commands.slice(1).forEach((command, i) => {
      const first = command.args[0]!;
      if (first.type === "constant" || first.type === "nil" || first.type === "dot") this.fail(`non executable command in pipeline stage ${i + 2}`, first.offset);
    });
    return pipe;
  }

  /** `$x :=`, `$x =`, and in range `$i, $e :=`. */
  private declarations(pipe: Pipeline, context: string): void {
    const save = this.pos;
    const variable = this.peekNonSpace();
    if (variable?.kind !== "variable") return;
    this.next();
    const after = this.peekNonSpace();
    if (after?.kind === "declare" || after?.kind === "assign") {
      this.next();
      pipe.isAssign = after.kind === "assign";
      pipe.declarations.push(variable.value);
    } else if (after?.kind === "comma" && context === "range") {
      this.next();
      const second = this.nextNonSpace();
      const op = this.nextNonSpace();
      if (second.kind !== "variable" || (op.kind !== "declare" && op.kind !== "assign")) this.fail("range can only initialize variables as $i, $e :=", second.offset);
      pipe.isAssign = op.kind === "assign";
      pipe.declarations.push(variable.value, second.value);
    } else if (after?.kind === "comma") {
      this.fail(`too many declarations in ${context}`, after.offset);
    } else {
      this.pos = save;
      return;
    }
    for (const name of pipe.declarations) {
      if (pipe.isAssign) this.useVariable(name, variable.offset);
      else this.vars.push(name);
    }
  }

  private useVariable(name: string, offset: number): void {
    if (!this.vars.includes(name)) this.fail(`undefined variable "${name}"`, offset);
  }

  private command(): Command {
    const args: Operand[] = [];
    const offset = this.peekNonSpace()?.offset ?? this.source.length;
    for (;;) {
      this.skipSpace();
      const operand = this.operand();
      if (operand) args.push(operand);
      const token = this.next();
      if (token.kind === "space") continue;
      if (token.kind === "close" || token.kind === "rightParen") this.pos--;
      else if (token.kind !== "pipe") this.fail(`unexpected "${token.value}" in operand`, token.offset);
      break;
    }
    if (args.length === 0) this.fail("empty command", offset);
    return { args, offset };
  }

  private operand(): Operand | undefined {
    const base = this.term();
    if (!base) return undefined;
    const fields: string[] = [];
    while (this.peek()?.kind === "field") fields.push(this.next().value);
    if (fields.length === 0) return base;
    switch (base.type) {
      case "field":
        return { ...base, names: [...base.names, ...fields] };
      case "variable":
        return { ...base, fields: [...base.fields, ...fields] };
      case "constant":
      case "nil":
      case "dot":
        return this.fail("unexpected . after a constant or dot", base.offset);
      default:
        return { type: "chain", base, fields, offset: base.offset };
    }
  }

  private term(): Operand | undefined {
    const token = this.peek();
    if (!token) return undefined;
    const offset = token.offset;
    switch (token.kind) {
      case "identifier":
        this.next();
        if (token.value === "true" || token.value === "false") return { type: "constant", value: token.value === "true", offset };
        if (token.value === "nil") return { type: "nil", offset };
        if (KEYWORDS.has(token.value)) this.fail(`unexpected "${token.value}" in operand`, offset);
        return { type: "function", name: token.value, offset };
      case "dot":
        this.next();
        return { type: "dot", offset };
      case "variable":
        this.next();
        this.useVariable(token.value, offset);
        return { type: "variable", name: token.value, fields: [], offset };
      case "field":
        this.next();
        return { type: "field", names: [token.value], offset };
      case "string":
        this.next();
        return { type: "constant", value: token.value, offset };
      case "number":
      case "char":
        this.next();
        return { type: "constant", value: token.number!, offset };
      case "leftParen":
        this.next();
        return { type: "pipeline", pipe: this.pipeline("parenthesized pipeline", "rightParen"), offset };
      default:
        return undefined;
    }
  }
}
