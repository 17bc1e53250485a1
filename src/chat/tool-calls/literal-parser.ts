// Parses Python literals and JSON values, and pythonic call lists (`[f(a=1), g(b="x")]`), with an
// explicit stack of open containers: each frame is in one state and each token moves it, so nesting
// depth costs no recursion and every failure names its offset.
import { LiteralLexer, type LiteralToken, type Punctuation } from "./literal-lexer.ts";
import type { ToolCallSyntaxError } from "./syntax-error.ts";

export interface PythonicCall {
  name: string;
  arguments: Record<string, unknown>;
}

type Frame =
  /** A list `[...]` or a tuple `(...)` (read as a list, since JSON has no tuples). */
  | { kind: "list"; close: "]" | ")"; items: unknown[]; state: "item" | "after-item" }
  | { kind: "dict"; entries: Map<string, unknown>; key: string; state: "key" | "colon" | "value" | "after-entry" }
  | { kind: "calls"; calls: PythonicCall[]; state: "call" | "after-call" }
  | { kind: "call"; name: string; args: Map<string, unknown>; key: string; state: "open" | "arg" | "equals" | "value" | "after-arg" };

const NAMED_VALUES = new Map<string, unknown>([
  ["True", true], ["False", false], ["None", null], ["true", true], ["false", false], ["null", null],
]);

class LiteralParser {
  private readonly lexer: LiteralLexer;
  private readonly stack: Frame[] = [];
  private result: { value: unknown } | undefined;

  constructor(text: string) {
    this.lexer = new LiteralLexer(text);
  }

  /** Reads one value, or with `calls` one pythonic call list, that must fill the whole text. */
  run(calls: boolean): unknown {
    if (calls) {
      const open = this.lexer.next();
      if (!isPunct(open, "[")) throw this.unexpected(open, "[ to open the call list");
      this.stack.push({ kind: "calls", calls: [], state: "call" });
    }
    for (;;) {
      const token = this.lexer.next();
      const frame = this.stack.at(-1);
      if (frame) {
        this.step(frame, token);
      } else if (this.result) {
        if (token.kind !== "end") throw this.unexpected(token, "the end of the text");
        return this.result.value;
      } else {
        this.startValue(token);
      }
    }
  }

  private step(frame: Frame, token: LiteralToken): void {
    switch (frame.kind) {
      case "list":
        if (isPunct(token, frame.close)) return this.close();
        if (frame.state === "item") return this.startValue(token);
        if (!isPunct(token, ",")) throw this.unexpected(token, `, or ${frame.close}`);
        frame.state = "item";
        return;
      case "dict":
        return this.stepDict(frame, token);
      case "calls":
        if (isPunct(token, "]")) return this.close();
        if (frame.state === "after-call") {
          if (!isPunct(token, ",")) throw this.unexpected(token, ", or ]");
          frame.state = "call";
        } else if (token.kind === "name") {
          this.stack.push({ kind: "call", name: token.value, args: new Map(), key: "", state: "open" });
        } else {
          throw this.unexpected(token, "a function call");
        }
        return;
      case "call":
        return this.stepCall(frame, token);
    }
  }

  private stepDict(frame: Extract<Frame, { kind: "dict" }>, token: LiteralToken): void {
    switch (frame.state) {
      case "key":
        if (isPunct(token, "}")) return this.close();
        if (token.kind !== "string" && token.kind !== "number") throw this.unexpected(token, "a string key or }");
        frame.key = String(token.value);
        frame.state = "colon";
        return;
      case "colon":
        if (!isPunct(token, ":")) throw this.unexpected(token, ":");
        frame.state = "value";
        return;
      case "value":
        return this.startValue(token);
      case "after-entry":
        if (isPunct(token, "}")) return this.close();
        if (!isPunct(token, ",")) throw this.unexpected(token, ", or }");
        frame.state = "key";
    }
  }

  private stepCall(frame: Extract<Frame, { kind: "call" }>, token: LiteralToken): void {
    switch (frame.state) {
      case "open":
        if (!isPunct(token, "(")) throw this.unexpected(token, `( after the function name ${frame.name}`);
        frame.state = "arg";
        return;
      case "arg":
        if (isPunct(token, ")")) return this.close();
        if (token.kind !== "name") throw this.unexpected(token, "a keyword argument (name=value) or )");
        if (frame.args.has(token.value)) throw this.lexer.error(`argument ${token.value} is repeated`, token.at);
        frame.key = token.value;
        frame.state = "equals";
        return;
      case "equals":
        if (!isPunct(token, "=")) throw this.unexpected(token, `= after the argument name ${frame.key}`);
        frame.state = "value";
        return;
      case "value":
        return this.startValue(token);
      case "after-arg":
        if (isPunct(token, ")")) return this.close();
        if (!isPunct(token, ",")) throw this.unexpected(token, ", or )");
        frame.state = "arg";
    }
  }

  /** A token where a value must begin: a scalar is complete at once, a bracket opens a frame. */
  private startValue(token: LiteralToken): void {
    if (token.kind === "string" || token.kind === "number") return this.deliver(token.value);
    if (token.kind === "name" && NAMED_VALUES.has(token.value)) return this.deliver(NAMED_VALUES.get(token.value));
    if (isPunct(token, "[")) return void this.stack.push({ kind: "list", close: "]", items: [], state: "item" });
    if (isPunct(token, "(")) return void this.stack.push({ kind: "list", close: ")", items: [], state: "item" });
    if (isPunct(token, "{")) return void this.stack.push({ kind: "dict", entries: new Map(), key: "", state: "key" });
    throw this.unexpected(token, "a value");
  }

  /** Ends the innermost frame and hands what it built to the one around it. */
  private close(): void {
    const frame = this.stack.pop()!;
    switch (frame.kind) {
      case "list":
        return this.deliver(frame.items);
      case "dict":
        // fromEntries makes own properties even of keys such as "__proto__", as JSON.parse does
        return this.deliver(Object.fromEntries(frame.entries));
      case "calls":
        return this.deliver(frame.calls);
      case "call":
        return this.deliver({ name: frame.name, arguments: Object.fromEntries(frame.args) } satisfies PythonicCall);
    }
  }

  private deliver(value: unknown): void {
    const frame = this.stack.at(-1);
    if (!frame) {
      this.result = { value };
      return;
    }
    switch (frame.kind) {
      case "list":
        frame.items.push(value);
        frame.state = "after-item";
        return;
      case "dict":
        frame.entries.set(frame.key, value);
        frame.state = "after-entry";
        return;
      case "calls":
        frame.calls.push(value as PythonicCall);
        frame.state = "after-call";
        return;
      case "call":
        frame.args.set(frame.key, value);
        frame.state = "after-arg";
    }
  }

  private unexpected(token: LiteralToken, expected: string): ToolCallSyntaxError {
    const found = token.kind === "end" ? "the end of the text" : token.kind === "punct" ? `"${token.value}"` : `${token.kind} ${JSON.stringify(token.value)}`;
    return this.lexer.error(`expected ${expected}, found ${found}`, token.at);
  }
}

function isPunct(token: LiteralToken, value: Punctuation): boolean {
  return token.kind === "punct" && token.value === value;
}

/** One Python literal or JSON value filling the whole text. */
export function parseLiteral(text: string): unknown {
  return new LiteralParser(text).run(false);
}

/** A pythonic call list, `[name(arg=value, ...), ...]`, filling the whole text. */
export function parsePythonicCalls(text: string): PythonicCall[] {
  return new LiteralParser(text).run(true) as PythonicCall[];
}
