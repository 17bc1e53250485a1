// Renders a parsed Jinja template with bounds on its cost. A chat template comes with a pulled model
// (or --chat-template), so it is untrusted input that runs on the server's only JS thread: a template
// looping 3e7 times once took 58 s and 9.5 GB. This interpreter counts every evaluation and checks the
// clock and the size of every value it produces, and the few built-ins that allocate from one number
// (range, indent width, tojson indent) are capped before they run.
import { Environment, Interpreter, type Template } from "@huggingface/jinja";

export interface JinjaLimits {
  /** Expressions and statements evaluated (each loop iteration evaluates at least one). */
  maxSteps: number;
  /** Characters of any one string the template builds, the output included. */
  maxOutputChars: number;
  /** Items of any one list the template builds (range() included). */
  maxItems: number;
  /** Wall-clock time of one render. */
  maxMilliseconds: number;
  /** Nesting of evaluations (macros calling macros, nested expressions). */
  maxDepth: number;
}

export const DEFAULT_JINJA_LIMITS: Readonly<JinjaLimits> = {
  maxSteps: 2_000_000, maxOutputChars: 16 * 1024 * 1024, maxItems: 1_000_000, maxMilliseconds: 1000, maxDepth: 500,
};

/** indent() widths and tojson(indent=…) above this are refused: one call would allocate width × lines. */
const MAX_INDENT = 1000;
const STEPS_PER_CLOCK_READ = 256;

/** The render passed one of its bounds. */
export class JinjaLimitError extends RangeError {
  override name = "JinjaLimitError";
}

type Statement = NonNullable<Parameters<Interpreter["evaluate"]>[0]>;
type RuntimeValue = ReturnType<Interpreter["evaluate"]>;
/** A node of our own that caps the integer its expression evaluates to. */
interface CappedNode { type: "LlamuxCapped"; inner: Statement; what: string; max: number }

class BoundedInterpreter extends Interpreter {
  private steps = 0;
  private depth = 0;
  private readonly deadline: number;

  constructor(env: Environment, private readonly limits: Readonly<JinjaLimits>) {
    super(env);
    this.deadline = performance.now() + limits.maxMilliseconds;
  }

  override evaluate(statement: Statement | undefined, environment: Environment): RuntimeValue {
    if (++this.steps > this.limits.maxSteps) throw new JinjaLimitError(`it evaluated more than ${this.limits.maxSteps} expressions (loops too long?)`);
    if (this.steps % STEPS_PER_CLOCK_READ === 0 && performance.now() > this.deadline) {
      throw new JinjaLimitError(`it ran longer than ${this.limits.maxMilliseconds} ms`);
    }
    if (statement?.type === "LlamuxCapped") return this.capped(statement as unknown as CappedNode, environment);
    // A loop iteration's tick: the step is counted above; evaluating nothing yields an undefined value, which adds no output.
    if (statement?.type === "LlamuxTick") return super.evaluate(undefined, environment);
    if (++this.depth > this.limits.maxDepth) throw new JinjaLimitError(`it nested evaluations more than ${this.limits.maxDepth} deep (recursive macros?)`);
    let result: RuntimeValue;
    try {
      result = super.evaluate(statement, environment);
    } finally {
      this.depth--;
    }
    const value: unknown = result.value;
    if (typeof value === "string" && value.length > this.limits.maxOutputChars) {
      throw new JinjaLimitError(`it built a string longer than ${this.limits.maxOutputChars} characters`);
    }
    if (Array.isArray(value) && value.length > this.limits.maxItems) throw new JinjaLimitError(`it built a list longer than ${this.limits.maxItems} items`);
    return result;
  }

  private capped(node: CappedNode, environment: Environment): RuntimeValue {
    const result = this.evaluate(node.inner, environment);
    if (typeof result.value === "number" && Math.abs(result.value) > node.max) throw new JinjaLimitError(`${node.what} ${result.value} is above ${node.max}`);
    return result;
  }
}

/**
 * Prepares a parsed template for bounded rendering, once: every loop body starts with a tick (an
 * empty body would otherwise iterate without a step), and the width arguments of indent() and
 * tojson(indent=…), which allocate from one number, are wrapped in capped nodes.
 */
export function prepareBounded(template: Template): void {
  const cap = (inner: Statement, what: string): Statement => ({ type: "LlamuxCapped", inner, what, max: MAX_INDENT }) as unknown as Statement;
  const visit = (node: unknown, seen: Set<unknown>): void => {
    if (!node || typeof node !== "object" || seen.has(node)) return;
    seen.add(node);
    const n = node as { type?: string; filter?: { type: string; callee?: { value?: string }; args?: Array<{ type: string; key?: { value: string }; value?: Statement }> } };
    if (n.type === "For") {
      const loop = node as { body: Statement[] };
      loop.body = [{ type: "LlamuxTick" } as unknown as Statement, ...loop.body];
    }
    if ((n.type === "FilterExpression" || n.type === "FilterStatement") && n.filter?.type === "CallExpression") {
      const name = n.filter.callee?.value;
      const args = n.filter.args ?? [];
      args.forEach((arg, i) => {
        const keyword = arg.type === "KeywordArgumentExpression" ? arg.key?.value : undefined;
        if (keyword !== undefined && ((name === "indent" && keyword === "width") || (name === "tojson" && keyword === "indent"))) {
          arg.value = cap(arg.value!, `${name} ${keyword}`);
        } else if (keyword === undefined && name === "indent" && i === 0) {
          args[i] = cap(arg as unknown as Statement, "indent width") as unknown as (typeof args)[number];
        }
      });
    }
    for (const child of Object.values(node)) visit(child, seen);
  };
  visit(template.parsed, new Set());
}

/** Python's range(), refusing more than `maxItems` numbers before making any. */
function boundedRange(maxItems: number) {
  return (start: number, stop?: number, step = 1): number[] => {
    if (stop === undefined) [start, stop] = [0, start];
    if (![start, stop, step].every(Number.isInteger)) throw new Error("range() arguments must be integers");
    if (step === 0) throw new Error("range() step must not be zero");
    const count = Math.max(0, Math.ceil((stop - start) / step));
    if (count > maxItems) throw new JinjaLimitError(`range() of ${count} numbers is more than ${maxItems}`);
    return Array.from({ length: count }, (_, i) => start + i * step);
  };
}

/** Python's time.strftime for the directives chat templates use (%Y %m %d %b %B %H %M %%), as @huggingface/jinja has it. */
function strftimeNow(format: string): string {
  const date = new Date();
  const pad2 = (n: number) => String(n).padStart(2, "0");
  return String(format).replace(/%[YmdbBHM%]/g, (token) => {
    switch (token) {
      case "%Y": return String(date.getFullYear());
      case "%m": return pad2(date.getMonth() + 1);
      case "%d": return pad2(date.getDate());
      case "%b": return new Intl.DateTimeFormat(undefined, { month: "short" }).format(date);
      case "%B": return new Intl.DateTimeFormat(undefined, { month: "long" }).format(date);
      case "%H": return pad2(date.getHours());
      case "%M": return pad2(date.getMinutes());
      default: return "%";
    }
  });
}

/** Template.render with the bounds: the same globals, then `items`, then a bounded interpreter. */
export function renderBounded(template: Template, items: Record<string, unknown>, limits: Readonly<JinjaLimits> = DEFAULT_JINJA_LIMITS): string {
  const env = new Environment();
  const globals: Record<string, unknown> = {
    false: false, true: true, none: null, False: false, True: true, None: null,
    raise_exception: (message: string) => {
      throw new Error(message);
    },
    range: boundedRange(limits.maxItems),
    strftime_now: strftimeNow,
  };
  for (const [key, value] of Object.entries({ ...globals, ...items })) env.set(key, value);
  const result = new BoundedInterpreter(env, limits).run(template.parsed);
  return String(result.value);
}
