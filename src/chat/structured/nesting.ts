// Nesting bounds on the inputs that become grammars, checked without recursion before the recursive
// converters run: a JSON schema nested 10,000 deep overflowed the JS stack (a 500), and so would a
// regex of 10,000 nested groups. The grammar they produce is bounded again by grammar-bounds.ts.
import { StructuredOutputError } from "./errors.ts";

/** JSON levels a schema may nest (each schema level is two: `properties`, then the property). */
export const MAX_SCHEMA_DEPTH = 128;
/** Groups a regex may nest. */
export const MAX_REGEX_DEPTH = 100;

/**
 * Throws StructuredOutputError when the JSON value nests deeper than `max` arrays and objects. `what`
 * names the value in the message (default: the JSON schema a grammar is made from).
 */
export function checkSchemaDepth(schema: unknown, max = MAX_SCHEMA_DEPTH, what = "Cannot enforce JSON schema: it"): void {
  const stack: Array<[unknown, number]> = [[schema, 1]];
  const seen = new Set<unknown>();
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (value === null || typeof value !== "object" || seen.has(value)) continue;
    if (depth > max) throw new StructuredOutputError(`${what} nests more than ${max} levels deep`);
    seen.add(value);
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
}

/** Throws StructuredOutputError when the regex nests groups deeper than `max` (classes and escapes skipped). */
export function checkRegexDepth(pattern: string, max = MAX_REGEX_DEPTH): void {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === "\\") i++;
    else if (inClass) inClass = ch !== "]";
    else if (ch === "[") inClass = true;
    else if (ch === "(" && ++depth > max) throw new StructuredOutputError(`Cannot use regex: its groups nest more than ${max} deep`);
    else if (ch === ")") depth = Math.max(0, depth - 1);
  }
}
