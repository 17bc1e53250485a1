// Keeps control-token text that arrives in messages (user or tool content, tool arguments, tool
// descriptions) from becoming control tokens: only the chat template's own text may open a turn or a
// tool call. Before rendering, each such text is swapped for a placeholder; after rendering, the prompt
// is cut at the placeholders, the template's parts are tokenized with special tokens parsed and the
// swapped texts without.

export interface PromptSegment {
  text: string;
  /** Tokenize as plain text (special-token text stays text). */
  plain: boolean;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export class SpecialTextShield {
  private readonly pattern: RegExp | undefined;
  private readonly nonce = crypto.randomUUID().slice(0, 8);
  private readonly swapped: string[] = [];

  constructor(controlTokenTexts: string[]) {
    const texts = controlTokenTexts.filter((text) => text.length > 0).sort((a, b) => b.length - a.length);
    this.pattern = texts.length ? new RegExp(texts.map(escapeRegExp).join("|"), "g") : undefined;
  }

  /** Whether any text was swapped (when not, the prompt can be tokenized whole). */
  get used(): boolean {
    return this.swapped.length > 0;
  }

  /** A copy of `value` with control-token text in every string swapped for placeholders. */
  protect<T>(value: T): T {
    if (!this.pattern) return value;
    return this.walk(value) as T;
  }

  private walk(value: unknown): unknown {
    if (typeof value === "string") return value.replace(this.pattern!, (match) => this.placeholder(match));
    if (Array.isArray(value)) return value.map((item) => this.walk(item));
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.walk(item)]));
    }
    return value;
  }

  /** ASCII only, so that templates' `tojson` writes it unchanged. */
  private placeholder(text: string): string {
    this.swapped.push(text);
    return `@@llamux-text-${this.nonce}-${this.swapped.length - 1}@@`;
  }

  private get placeholderPattern(): RegExp {
    return new RegExp(`@@llamux-text-${this.nonce}-(\\d+)@@`, "g");
  }

  /** The rendered prompt as template text and swapped-back plain text, in order. */
  segments(rendered: string): PromptSegment[] {
    const out: PromptSegment[] = [];
    let last = 0;
    for (const match of rendered.matchAll(this.placeholderPattern)) {
      if (match.index > last) out.push({ text: rendered.slice(last, match.index), plain: false });
      out.push({ text: this.swapped[Number(match[1])]!, plain: true });
      last = match.index + match[0].length;
    }
    if (last < rendered.length) out.push({ text: rendered.slice(last), plain: false });
    return out;
  }

  /** The rendered prompt with the original texts back in place. */
  restore(rendered: string): string {
    return rendered.replace(this.placeholderPattern, (_, index: string) => this.swapped[Number(index)]!);
  }
}
