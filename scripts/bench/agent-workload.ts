// The agents parts' workload: sessions whose prompts are a prefix they all share, then each session's own
// history, which grows by `turnTokens` a turn (as an agent resends system prompt, tools and history). The
// same tokens on every server and in every run; sent as token ids to /v1/completions, so both servers see
// exactly the same prompts. Used by agent-sessions.ts, agent-restart.ts and session-affinity.ts.
import { readGgufHeaderSync, type GgufArray } from "../../src/store/gguf.ts";
import { percentile, randomPrompt, streamRequest } from "./server.ts";

export interface SessionShape {
  sessions: number;
  /** Tokens of the prefix every session's prompts start with. */
  prefixTokens: number;
  /** Tokens each turn adds to a session's history. */
  turnTokens: number;
  turns: number;
  /** Tokens generated per turn. */
  outputTokens: number;
  /** An agent's time between an answer and its next turn; 0: at once, all sessions started together. */
  thinkMs?: number;
}

export interface TurnSample {
  session: number;
  turn: number;
  promptTokens: number;
  ttftMs: number;
  /** prompt tokens the server says it took from its cache (0 when it does not say) */
  cachedTokens: number;
  completionTokens: number;
}

export function vocabularySize(path: string): number {
  const header = readGgufHeaderSync(path, { maxArrayLength: 0 });
  return (header.metadata.get("tokenizer.ggml.tokens") as GgufArray | undefined)?.length ?? 32_000;
}

/** Every session's prompts, turn after turn; a session's history only grows. */
export class SessionWorkload {
  readonly prefix: number[];
  private readonly histories: number[][];
  private readonly sent: number[];

  constructor(private readonly shape: Pick<SessionShape, "sessions" | "prefixTokens" | "turnTokens">, private readonly vocabulary: number) {
    this.prefix = randomPrompt(shape.prefixTokens, vocabulary, 1);
    this.histories = Array.from({ length: shape.sessions }, () => []);
    this.sent = Array.from({ length: shape.sessions }, () => 0);
  }

  /** The session's next turn: its history grows by turnTokens (seeded by session and turn); the whole prompt. */
  next(session: number): { turn: number; prompt: number[] } {
    const turn = ++this.sent[session]!;
    const history = this.histories[session]!;
    for (const token of randomPrompt(this.shape.turnTokens, this.vocabulary, 1000 + session * 100 + turn)) history.push(token);
    return { turn, prompt: this.prefix.concat(history) };
  }

  /** A prompt no session sent and no earlier prompt starts with: what a cold turn of `length` costs. */
  cold(length: number, seed: number): number[] {
    return randomPrompt(length, this.vocabulary, seed);
  }
}

/** Time to the first token, the prompt tokens the server took from its cache, and the tokens generated. */
export async function timeToFirstToken(baseUrl: string, model: string, prompt: number[], outputTokens: number, headers: Record<string, string> = {}): Promise<{ ttftMs: number; cachedTokens: number; completionTokens: number }> {
  // special tokens as text: a random model may pick one, and llamux (as vLLM) sends no chunk for an empty piece
  const timing = await streamRequest(baseUrl, "/v1/completions", { model, prompt, max_tokens: outputTokens, temperature: 0, ignore_eos: true, skip_special_tokens: false }, headers);
  return { ttftMs: (timing.chunkTimes[0] ?? timing.endAt) - timing.sentAt, cachedTokens: timing.cachedTokens ?? 0, completionTokens: timing.completionTokens };
}

export interface SessionsRun {
  turns: TurnSample[];
  wallMs: number;
  completionTokens: number;
}

/**
 * Every session sends `shape.turns` turns one after another, all sessions at once (or, with thinkMs,
 * session i starting i × thinkMs / sessions ms after the first and waiting thinkMs between turns).
 */
export async function runSessions(
  baseUrl: string, model: string, workload: SessionWorkload, shape: SessionShape,
  o: { label: string; headers?: (session: number) => Record<string, string>; log: (line: string) => void },
): Promise<SessionsRun> {
  const turns: TurnSample[] = [];
  const thinkMs = shape.thinkMs ?? 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: shape.sessions }, async (_, session) => {
    await Bun.sleep((session * thinkMs) / shape.sessions);
    for (let i = 1; i <= shape.turns; i++) {
      if (i > 1) await Bun.sleep(thinkMs);
      const { turn, prompt } = workload.next(session);
      const answer = await timeToFirstToken(baseUrl, model, prompt, shape.outputTokens, o.headers?.(session));
      turns.push({ session, turn, promptTokens: prompt.length, ...answer });
      o.log(`${o.label}: session ${session} turn ${turn} (${prompt.length} tokens, ${answer.cachedTokens} cached): first token after ${answer.ttftMs.toFixed(0)} ms`);
    }
  }));
  return { turns, wallMs: performance.now() - started, completionTokens: turns.reduce((sum, t) => sum + t.completionTokens, 0) };
}

/** Later turns (2 and on): TTFT p50 and p90 in ms, and of each turn's TTFT ÷ the cold TTFT of its length. */
export function laterTurnFigures(turns: TurnSample[], coldMs: (turn: TurnSample) => number | undefined): { p50Ms: number; p90Ms: number; p50OfCold: number; p90OfCold: number; count: number } {
  const later = turns.filter((t) => t.turn > 1);
  const ofCold = later.flatMap((t) => {
    const cold = coldMs(t);
    return cold ? [t.ttftMs / cold] : [];
  });
  const ms = later.map((t) => t.ttftMs);
  return { p50Ms: percentile(ms, 50), p90Ms: percentile(ms, 90), p50OfCold: percentile(ofCold, 50), p90OfCold: percentile(ofCold, 90), count: later.length };
}

/** The share of the prompt tokens the server took from its cache, over some turns. */
export function cachedShare(turns: TurnSample[]): number {
  const prompt = turns.reduce((sum, t) => sum + t.promptTokens, 0);
  return prompt > 0 ? turns.reduce((sum, t) => sum + t.cachedTokens, 0) / prompt : NaN;
}
