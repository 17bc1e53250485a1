// Runs a parsed template over data with text/template's semantics. Besides the text, it records
// which output came straight from the data (fields and variables holding request values) and which
// from the template itself, so a caller can keep special-token text in user content plain.
import type { BranchNode, Command, Node, Operand, Pipeline, TemplateTree } from "./ast.ts";
import { TemplateExecutionError, TemplateLimitError, TemplateValueError, positionOf } from "./errors.ts";
import type { TemplateFunction } from "./functions.ts";
import { fieldOf, formatActionValue, formatValue, isGoStruct, isMap, isTrue, typeName } from "./values.ts";

/** A piece of output; `fromData` when it is a value read from the data rather than template text. */
export interface OutputPart {
  text: string;
  fromData: boolean;
}

interface Value {
  value: unknown;
  fromData: boolean;
}

const MAX_TEMPLATE_DEPTH = 1000;
class BreakSignal {}
class ContinueSignal {}

/**
 * What one execution may cost. A template is untrusted input (a request's `template`, a pulled model's
 * TEMPLATE), and it runs on the server's only JS thread: `{{range 30000}}{{range 30000}}…` must end in
 * an error, not freeze every request.
 */
export interface TemplateLimits {
  /** Nodes and commands evaluated (each range iteration counts). */
  maxSteps: number;
  /** Characters of output. */
  maxOutputChars: number;
  /** Wall-clock time of one execution. */
  maxMilliseconds: number;
}

export const DEFAULT_TEMPLATE_LIMITS: Readonly<TemplateLimits> = { maxSteps: 1_000_000, maxOutputChars: 16 * 1024 * 1024, maxMilliseconds: 1000 };

/** The clock is read once per this many steps. */
const STEPS_PER_CLOCK_READ = 256;

export function executeTree(
  tree: TemplateTree, source: string, data: unknown, functions: Readonly<Record<string, TemplateFunction>>, limits: Readonly<TemplateLimits> = DEFAULT_TEMPLATE_LIMITS,
): OutputPart[] {
  return new Executor(tree, source, functions, limits).run(data);
}

class Executor {
  private vars: Array<{ name: string } & Value> = [];
  private readonly out: OutputPart[] = [];
  private depth = 0;
  private steps = 0;
  private outputChars = 0;
  private deadline = 0;

  constructor(
    private readonly tree: TemplateTree, private readonly source: string, private readonly functions: Readonly<Record<string, TemplateFunction>>,
    private readonly limits: Readonly<TemplateLimits>,
  ) {}

  run(data: unknown): OutputPart[] {
    const root = { value: data, fromData: true };
    this.vars = [{ name: "$", ...root }];
    this.deadline = performance.now() + this.limits.maxMilliseconds;
    this.walk(this.tree.root, root);
    return this.out;
  }

  /** Counts one unit of work and ends the execution when a bound is passed. */
  private step(): void {
    if (++this.steps > this.limits.maxSteps) {
      throw new TemplateLimitError(`Cannot execute template: it ran more than ${this.limits.maxSteps} steps (loops too long?)`);
    }
    if (this.steps % STEPS_PER_CLOCK_READ === 0 && performance.now() > this.deadline) {
      throw new TemplateLimitError(`Cannot execute template: it ran longer than ${this.limits.maxMilliseconds} ms`);
    }
  }

  private fail(reason: string, offset: number): never {
    const near = this.source.slice(offset).split("}}")[0]!.trim().slice(0, 40);
    throw new TemplateExecutionError(reason, positionOf(this.source, offset), `at <${near}>`);
  }

  /** Runs `work`, turning value errors into execution errors at `offset`. */
  private at<T>(offset: number, work: () => T): T {
    try {
      return work();
    } catch (error) {
      if (error instanceof TemplateValueError) this.fail(error.message, offset);
      // A built-in given absurd arguments (a huge precision, a string too long) fails as the template's error.
      if (error instanceof RangeError && !(error instanceof TemplateLimitError)) this.fail(error.message, offset);
      throw error;
    }
  }

  private emit(text: string, fromData: boolean): void {
    if (!text) return;
    this.outputChars += text.length;
    if (this.outputChars > this.limits.maxOutputChars) {
      throw new TemplateLimitError(`Cannot execute template: its output passed ${this.limits.maxOutputChars} characters`);
    }
    const last = this.out[this.out.length - 1];
    if (last && last.fromData === fromData) last.text += text;
    else this.out.push({ text, fromData });
  }

  private walk(nodes: Node[], dot: Value): void {
    for (const node of nodes) {
      this.step();
      switch (node.type) {
        case "text":
          this.emit(node.text, false);
          break;
        case "action": {
          const result = this.pipeline(node.pipe, dot, true);
          if (node.pipe.declarations.length === 0) this.emit(formatActionValue(result.value), result.fromData);
          break;
        }
        case "if":
        case "with": {
          const mark = this.vars.length;
          const result = this.pipeline(node.pipe, dot, true);
          if (isTrue(result.value)) this.walk(node.list, node.type === "with" ? result : dot);
          else if (node.elseList) this.walk(node.elseList, dot);
          this.vars.length = mark;
          break;
        }
        case "range":
          this.range(node, dot);
          break;
        case "template":
          this.callTemplate(node.name, node.pipe ? this.pipeline(node.pipe, dot, false) : { value: undefined, fromData: false }, node.offset);
          break;
        case "break":
          throw new BreakSignal();
        case "continue":
          throw new ContinueSignal();
      }
    }
  }

  private range(node: BranchNode, dot: Value): void {
    const mark = this.vars.length;
    const collection = this.pipeline(node.pipe, dot, false);
    const items = this.at(node.pipe.offset, () => iterationItems(collection.value));
    if (items.length === 0 && node.elseList) this.walk(node.elseList, dot);
    for (const [key, element] of items) {
      this.step();
      this.vars.length = mark;
      const names = node.pipe.declarations;
      const values = names.length === 2 ? [key, element] : [element];
      names.forEach((name, i) => this.bind(name, { value: values[i], fromData: collection.fromData }, node.pipe.isAssign));
      try {
        this.walk(node.list, { value: element, fromData: collection.fromData });
      } catch (signal) {
        if (signal instanceof BreakSignal) break;
        if (!(signal instanceof ContinueSignal)) throw signal;
      }
    }
    this.vars.length = mark;
  }

  private callTemplate(name: string, dot: Value, offset: number): void {
    const body = this.tree.defines.get(name);
    if (!body) this.fail(`no such template "${name}"`, offset);
    if (++this.depth > MAX_TEMPLATE_DEPTH) this.fail(`exceeded maximum template depth (${MAX_TEMPLATE_DEPTH})`, offset);
    const saved = this.vars;
    this.vars = [{ name: "$", ...dot }];
    try {
      this.walk(body!, dot);
    } finally {
      this.vars = saved;
      this.depth--;
    }
  }

  private bind(name: string, value: Value, assign: boolean): void {
    if (!assign) {
      this.vars.push({ name, ...value });
      return;
    }
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i]!.name === name) {
        this.vars[i] = { name, ...value };
        return;
      }
    }
  }

  private variable(name: string, offset: number): Value {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i]!.name === name) return this.vars[i]!;
    return this.fail(`undefined variable: ${name}`, offset);
  }

  /** Evaluates the commands; `declare` binds the pipeline's variables to the result. */
  private pipeline(pipe: Pipeline, dot: Value, declare: boolean): Value {
    let result: Value | undefined;
    for (const command of pipe.commands) result = this.command(command, dot, result);
    if (declare) for (const name of pipe.declarations) this.bind(name, result!, pipe.isAssign);
    return result!;
  }

  private command(command: Command, dot: Value, piped: Value | undefined): Value {
    this.step();
    const [first, ...rest] = command.args;
    const extra = rest.length > 0 || piped !== undefined;
    const notFunction = (what: string) => extra && this.fail(`can't give argument to non-function ${what}`, first!.offset);
    switch (first!.type) {
      case "function":
        return this.call(first!.name, rest, dot, piped, first!.offset);
      case "field":
        return this.fieldChain(dot, first!.names, rest, dot, piped, first!.offset);
      case "variable": {
        const base = this.variable(first!.name, first!.offset);
        if (first!.fields.length > 0) return this.fieldChain(base, first!.fields, rest, dot, piped, first!.offset);
        notFunction(first!.name);
        return base;
      }
      case "chain":
        return this.fieldChain(this.operand(first!.base, dot), first!.fields, rest, dot, piped, first!.offset);
      case "nil":
        return this.fail("nil is not a command", first!.offset);
      default:
        notFunction(first!.type === "constant" ? String(first!.value) : first!.type);
        return this.operand(first!, dot);
    }
  }

  /** `.A.B c d`: fields (and methods) in turn; the last may be a method called with the arguments. */
  private fieldChain(receiver: Value, names: string[], args: Operand[], dot: Value, piped: Value | undefined, offset: number): Value {
    let current = receiver.value;
    names.forEach((name, i) => {
      const last = i === names.length - 1;
      const value = this.at(offset, () => fieldOf(current, name));
      if (typeof value === "function") {
        const callArgs = last ? [...args.map((arg) => this.operand(arg, dot).value), ...(piped ? [piped.value] : [])] : [];
        current = this.at(offset, () => value.apply(current, callArgs));
      } else {
        if (last && (args.length > 0 || piped)) this.fail(`${name} has arguments but cannot be invoked as a function`, offset);
        current = value;
      }
    });
    return { value: current, fromData: receiver.fromData };
  }

  private operand(operand: Operand, dot: Value): Value {
    switch (operand.type) {
      case "dot":
        return dot;
      case "constant":
        return { value: operand.value, fromData: false };
      case "nil":
        return { value: null, fromData: false };
      case "field":
        return this.fieldChain(dot, operand.names, [], dot, undefined, operand.offset);
      case "variable": {
        const base = this.variable(operand.name, operand.offset);
        return operand.fields.length > 0 ? this.fieldChain(base, operand.fields, [], dot, undefined, operand.offset) : base;
      }
      case "chain":
        return this.fieldChain(this.operand(operand.base, dot), operand.fields, [], dot, undefined, operand.offset);
      case "pipeline":
        return this.pipeline(operand.pipe, dot, false);
      case "function":
        return this.call(operand.name, [], dot, undefined, operand.offset);
    }
  }

  private call(name: string, args: Operand[], dot: Value, piped: Value | undefined, offset: number): Value {
    // A missing value passed to a function is nil there, as in Go.
    const evaluate = (arg: Operand) => this.operand(arg, dot).value ?? null;
    if (name === "and" || name === "or") {
      if (args.length + (piped ? 1 : 0) === 0) this.fail(`wrong number of args for ${name}: want at least 1 got 0`, offset);
      // Short-circuit, as Go 1.18+: stop at the first false (and) or true (or) argument.
      let result: unknown;
      for (const value of [...args.map((arg) => () => evaluate(arg)), ...(piped ? [() => piped.value] : [])]) {
        result = value();
        if (isTrue(result) === (name === "or")) break;
      }
      return { value: result, fromData: false };
    }
    const values = [...args.map(evaluate), ...(piped ? [piped.value ?? null] : [])];
    if (name === "call") {
      const [fn, ...rest] = values;
      if (typeof fn !== "function") this.fail(`call of non-function ${typeName(fn)}`, offset);
      return { value: this.at(offset, () => (fn as TemplateFunction)(...rest)), fromData: false };
    }
    const fn = Object.hasOwn(this.functions, name) ? this.functions[name] : undefined;
    if (!fn) this.fail(`function "${name}" not defined`, offset);
    return { value: this.at(offset, () => fn!(...values)), fromData: false };
  }
}

/**
 * [key, element] pairs of what range walks: slices, maps (sorted keys), integers (0..n-1); nil is empty.
 * Integers are counted lazily: `range 1e12` must reach the step bound, not allocate first.
 */
function iterationItems(value: unknown): Iterable<[unknown, unknown]> & { length: number } {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value.map((element, i) => [i, element]);
  if (typeof value === "number" && Number.isInteger(value)) return countTo(Math.max(0, value));
  if (isMap(value) && !isGoStruct(value)) return Object.keys(value).sort().map((key) => [key, value[key]]);
  throw new TemplateValueError(`range can't iterate over ${formatValue(value)}`);
}

function countTo(n: number): Iterable<[number, number]> & { length: number } {
  return {
    length: n,
    *[Symbol.iterator]() {
      for (let i = 0; i < n; i++) yield [i, i];
    },
  };
}
