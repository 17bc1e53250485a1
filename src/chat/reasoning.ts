// Splits `<think>…</think>` reasoning from the answer as a reply streams. Reasoning opens only at the
// start of the reply (or in the prompt, when the template ends it with `<think>`), closes at the first
// `</think>`, and does not open again. Whitespace just inside the tags and just after them is left out.
import type { ChatOutput, OutputParser } from "./output-parser.ts";
import { partialMarkerLength } from "./tool-calls/tool-call-output.ts";

export const THINK_OPEN = "<think>";
export const THINK_CLOSE = "</think>";

/**
 * vLLM's --reasoning-parser names whose models mark reasoning with <think> tags. Others (granite,
 * mistral, openai_gptoss, seed_oss, kimi_k2, cohere_command3/4, gemma4, poolside_v1) use other markup.
 */
export const THINK_TAG_REASONING_PARSERS = [
  "deepseek_r1", "deepseek_v3", "deepseek_v4", "qwen3", "glm45", "holo2", "hunyuan_a13b", "minimax_m2",
  "minimax_m2_append_think", "nemotron_v3", "olmo3", "ernie45", "step3", "step3p5",
] as const;

/** Whether a rendered prompt leaves the reply inside reasoning (the template wrote an open `<think>`). */
export function promptOpensReasoning(prompt: string): boolean {
  return prompt.trimEnd().endsWith(THINK_OPEN);
}

export class ReasoningOutput implements OutputParser {
  private state: "start" | "reasoning" | "answer";
  private pending = "";
  /** Leading whitespace is still being skipped (just after `<think>` or `</think>`). */
  private trimming = true;

  constructor(options: { startsInside?: boolean } = {}) {
    this.state = options.startsInside ? "reasoning" : "start";
  }

  push(text: string): ChatOutput[] {
    this.pending += text;
    return this.drain(false);
  }

  finish(): ChatOutput[] {
    return this.drain(true);
  }

  private drain(final: boolean): ChatOutput[] {
    const out: ChatOutput[] = [];
    if (this.state === "start") {
      const first = this.pending.search(/\S/);
      const rest = first < 0 ? "" : this.pending.slice(first);
      if (rest.startsWith(THINK_OPEN)) {
        this.state = "reasoning";
        this.pending = rest.slice(THINK_OPEN.length);
      } else if (!final && THINK_OPEN.startsWith(rest)) {
        return out; // only whitespace or a partial "<think>" so far
      } else {
        this.state = "answer";
        this.trimming = false;
      }
    }
    if (this.state === "reasoning") {
      if (this.trimming) this.pending = this.pending.trimStart();
      if (this.pending) this.trimming = false;
      const close = this.pending.indexOf(THINK_CLOSE);
      if (close < 0) {
        // Hold what may be the start of "</think>", and trailing whitespace that may sit before it.
        const keep = final ? this.pending.trimEnd().length : this.pending.length - partialMarkerLength(this.pending, THINK_CLOSE);
        const body = final ? this.pending.slice(0, keep) : this.pending.slice(0, keep).trimEnd();
        if (body) out.push({ type: "reasoning", text: body });
        this.pending = final ? "" : this.pending.slice(body.length);
        return out;
      }
      const body = this.pending.slice(0, close).trimEnd();
      if (body) out.push({ type: "reasoning", text: body });
      this.pending = this.pending.slice(close + THINK_CLOSE.length);
      this.state = "answer";
      this.trimming = true;
    }
    if (this.trimming) this.pending = this.pending.trimStart();
    if (this.pending) {
      this.trimming = false;
      out.push({ type: "content", text: this.pending });
      this.pending = "";
    }
    return out;
  }
}
