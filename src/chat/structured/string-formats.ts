// JSON schema string formats as GBNF (the text between the quotes). Each grammar admits a conservative
// subset of the format, chosen so that ajv-formats and the patterns zod writes beside a format accept
// every value: lower-case hex and host names, labels that do not end in "-", URIs as
// scheme "://" host path. Lengths are bounded so that random logits still end.
import type { RuleSet } from "./gbnf.ts";
import { StructuredOutputError } from "./errors.ts";

export const STRING_FORMATS = ["date", "time", "date-time", "uuid", "uri", "url", "email", "hostname", "ipv4", "ipv6"] as const;

/** The shortest and longest values each grammar below writes (what a minLength/maxLength beside it must allow). */
export const FORMAT_LENGTHS: Record<(typeof STRING_FORMATS)[number], [number, number]> = {
  "date": [10, 10], "time": [9, 18], "date-time": [20, 29], "uuid": [36, 36], "uri": [5, 200], "url": [5, 200],
  "email": [6, 110], "hostname": [1, 67], "ipv4": [7, 15], "ipv6": [15, 39],
};

const LABEL = '[a-z0-9] ([a-z0-9-]{0,14} [a-z0-9])?';

export function formatGrammar(rules: RuleSet, format: unknown, path: string): string {
  const date = () => rules.add("date", '[0-9]{4} "-" (("0" [13578] | "1" [02]) "-" ("0" [1-9] | [12] [0-9] | "3" [01]) | ("0" [469] | "11") "-" ("0" [1-9] | [12] [0-9] | "30") | "02-" ("0" [1-9] | "1" [0-9] | "2" [0-8]))');
  const time = () => rules.add("time", '([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,3})? ("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9])');
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
      return `${date()} "T" ${time()}`;
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
