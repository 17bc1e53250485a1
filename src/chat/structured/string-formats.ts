// JSON schema string formats as GBNF (the text between the quotes). Each grammar admits a conservative
// subset of the format, chosen so that ajv-formats and the patterns zod writes beside a format accept
// every value: lower-case hex and host names, labels that do not end in "-", URIs as
// scheme "://" host path, date-times in UTC. Lengths are bounded so that random logits still end.
import type { RuleSet } from "./gbnf.ts";
import { StructuredOutputError } from "./errors.ts";

export const STRING_FORMATS = ["date", "time", "date-time", "uuid", "uri", "url", "email", "hostname", "ipv4", "ipv6"] as const;

/** The shortest and longest values each grammar below writes (what a minLength/maxLength beside it must allow). */
export const FORMAT_LENGTHS: Record<(typeof STRING_FORMATS)[number], [number, number]> = {
  "date": [10, 10], "time": [9, 18], "date-time": [20, 24], "uuid": [36, 36], "uri": [5, 200], "url": [5, 200],
  "email": [6, 110], "hostname": [1, 67], "ipv4": [7, 15], "ipv6": [15, 39],
};

const LABEL = '[a-z0-9] ([a-z0-9-]{0,14} [a-z0-9])?';

export function formatGrammar(rules: RuleSet, format: unknown, path: string): string {
  const date = () => rules.add("date", '[0-9]{4} "-" (("0" [13578] | "1" [02]) "-" ("0" [1-9] | [12] [0-9] | "3" [01]) | ("0" [469] | "11") "-" ("0" [1-9] | [12] [0-9] | "30") | "02-" ("0" [1-9] | "1" [0-9] | "2" [0-8]))');
  const clock = () => rules.add("clock", '([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,3})?');
  const time = () => rules.add("time", `${clock()} ("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9])`);
  const label = () => rules.add("host-label", LABEL);
  const hostname = () => {
    const part = label();
    return rules.add("hostname", `${part} ("." ${part}){0,3}`);
  };
  switch (format) {
    case "date":
      return date();
    case "time":
      return time();
    case "date-time":
      // In UTC: zod's own parse of a date-time (and its pattern) takes no offset by default.
      return `${date()} "T" ${clock()} "Z"`;
    case "uuid":
      // Versions 1-8 and the RFC variant: what zod's uuid pattern also asks for.
      return rules.add("uuid", '[0-9a-f]{8} "-" [0-9a-f]{4} "-" [1-8] [0-9a-f]{3} "-" [89ab] [0-9a-f]{3} "-" [0-9a-f]{12}');
    case "uri":
    case "url":
      return rules.add("uri", `("https" | "http" | [a-z] [a-z0-9+.-]{0,9}) "://" ${hostname()} (":" [1-9] [0-9]{0,3})? ("/" [A-Za-z0-9._~-]{0,16}){0,4} ("?" [A-Za-z0-9._~=&-]{1,32})?`);
    case "email":
      return rules.add("email", `[a-z0-9_+-]{1,16} ("." [a-z0-9_+-]{1,16}){0,2} "@" (${label()} "."){1,3} [a-z]{2,6}`);
    case "hostname":
      return hostname();
    case "ipv4":
    {
      const octet = rules.add("ipv4-octet", '"25" [0-5] | "2" [0-4] [0-9] | "1" [0-9] [0-9] | [1-9] [0-9] | [0-9]');
      return rules.add("ipv4", `${octet} ("." ${octet}){3}`);
    }
    case "ipv6":
      return rules.add("ipv6", '[0-9a-f]{1,4} (":" [0-9a-f]{1,4}){7}');
    default:
      throw new StructuredOutputError(`Unsupported JSON schema format ${JSON.stringify(format)} at ${path}: only ${STRING_FORMATS.join(", ")} can be enforced`, "format");
  }
}

/** Values at the edges of each format's grammar: a pattern beside the format must accept them all. */
const FORMAT_PROBES: Record<(typeof STRING_FORMATS)[number], string[]> = {
  "date": ["2024-02-28", "1999-12-31"],
  "time": ["23:59:59Z", "00:00:00.123+05:30"],
  "date-time": ["2024-02-28T23:59:59Z", "1999-12-31T00:00:00.123Z"],
  "uuid": ["123e4567-e89b-12d3-a456-426614174000", "ffffffff-ffff-8fff-bfff-ffffffffffff"],
  "uri": ["https://a.b-c.d/e_f/~g?h=i&j", "a+b.c-d://x-y.z:8080/p.q~r?s=t&u-v"],
  "url": ["https://a.b-c.d/e_f/~g?h=i&j", "a+b.c-d://x-y.z:8080/p.q~r?s=t&u-v"],
  "email": ["a@b.co", "a_b+c-d.e@f-g.h.ij"],
  "hostname": ["a", "a-b.c1.d2.e3"],
  "ipv4": ["0.0.0.0", "255.249.199.10"],
  "ipv6": ["0:0:0:0:0:0:0:0", "ffff:a:0:1234:abcd:9:f:0"],
};

/**
 * Whether a pattern written beside a format (zod writes one for each) accepts what the format's grammar
 * writes, judged on values at the grammar's edges: then the format's grammar, bounded and conservative,
 * stands for both.
 */
export function patternAcceptsFormat(pattern: string, format: unknown): boolean {
  const probes = FORMAT_PROBES[format as keyof typeof FORMAT_PROBES];
  if (!probes) return false;
  try {
    const regex = new RegExp(pattern, "u");
    return probes.every((probe) => regex.test(probe));
  } catch {
    return false;
  }
}
