// Ollama's keep_alive values: a JSON number of seconds, or a Go duration string ("5m", "1h30m", "-1s").
// Ollama parses the string with Go's time.ParseDuration, so a bare "300" is an error there; its
// environment variable OLLAMA_KEEP_ALIVE accepts whole seconds too. Here, beside config.ts, because the
// environment, the Ollama routes and the CLI's chat all read them: no dialect owns them.

const unitMs: Record<string, number> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, "μs": 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration, in milliseconds. Throws a SyntaxError worded like Go's. */
export function parseGoDuration(text: string): number {
  const invalid = () => new SyntaxError(`time: invalid duration "${text}"`);
  let rest = text;
  let sign = 1;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    if (rest[0] === "-") sign = -1;
    rest = rest.slice(1);
  }
  if (rest === "0") return 0;
  if (rest === "") throw invalid();
  let total = 0;
  while (rest !== "") {
    const number = /^(\d*)(?:\.(\d*))?/.exec(rest)!;
    if (number[0] === "" || number[0] === ".") throw invalid();
    rest = rest.slice(number[0].length);
    const unit = /^[^\d.]+/.exec(rest)?.[0];
    if (unit === undefined) throw new SyntaxError(`time: missing unit in duration "${text}"`);
    const scale = unitMs[unit];
    if (scale === undefined) throw new SyntaxError(`time: unknown unit "${unit}" in duration "${text}"`);
    total += Number(number[0]) * scale;
    rest = rest.slice(unit.length);
  }
  return sign * total;
}

/** A request's keep_alive in milliseconds: negative means forever (Infinity). */
export function keepAliveMs(value: number | string): number {
  const ms = typeof value === "number" ? value * 1000 : parseGoDuration(value.trim());
  return ms < 0 ? Infinity : ms;
}

/** OLLAMA_KEEP_ALIVE: a Go duration or whole seconds, negative meaning forever. */
export function keepAliveFromEnv(text: string): number {
  return /^[-+]?\d+$/.test(text) ? keepAliveMs(Number(text)) : keepAliveMs(text);
}
