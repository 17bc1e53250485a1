// POST /v1/systemone on profile a through the official `ollama` client's systemone(): choice, noul and
// score questions about a state, answered from the model's token probabilities (each answer scored as
// its own engine sequence) with the tiny llama model over real HTTP on loopback.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Ollama, type SystemOneRequest, type SystemOneResponse } from "ollama";
import { ensureModel } from "../../../scripts/gen-models.ts";
import { startProfileApps, type ProfileApps } from "../../fixtures/profile-apps.ts";
import { MAX_SYSTEMONE_ANSWERS, MAX_SYSTEMONE_QUESTIONS } from "../../../src/server/ollama/systemone/schema.ts";

const MODEL = "tiny-chat";
const EMBEDDER = "tiny-embed";
let apps: ProfileApps;
let ollama: Ollama;

beforeAll(async () => {
  const [chat, embed] = await Promise.all([ensureModel("tiny-llama"), ensureModel("tiny-bert")]);
  apps = startProfileApps([{ path: chat, name: MODEL }, { path: embed, name: EMBEDDER }], { parallel: 4, contextPerSequence: 1024, threads: 2 });
  ollama = new Ollama({ host: apps.base.a });
}, 120_000);

afterAll(() => apps.stop());

const state = { subject: "Duplicate charge", body: "I was charged twice for my subscription this month. Please help!" };
const request: SystemOneRequest = {
  model: MODEL,
  state,
  questions: {
    team: { type: "choice", instructions: "Which team should handle this message?", criteria: { billing: "Payments, invoices, refunds", technical: "Bugs and outages", other: null } },
    billing: { type: "noul", instructions: "Is this message about a billing problem?" },
    urgency: { type: "score", instructions: { ask: "How urgent is this message?" }, criteria: ["Can wait", "This week", "Today", "Right now"] },
  },
};

const sum = (values: Record<string, number>) => Object.values(values).reduce((a, b) => a + b, 0);

async function refused(body: unknown): Promise<{ status: number; message: unknown }> {
  const error = await ollama.systemone(body as SystemOneRequest).then(() => undefined, (e: unknown) => e as { status_code: number; error: unknown });
  expect(error).toBeDefined();
  return { status: error!.status_code, message: error!.error };
}

describe("ollama.systemone()", () => {
  let first: SystemOneResponse;

  test("every question answered in its type's shape; probabilities sum to 1 per question", async () => {
    first = await ollama.systemone(request);
    expect(first.model).toBe(MODEL);
    expect(Object.keys(first.answers).sort()).toEqual(["billing", "team", "urgency"]);

    const team = first.answers.team!;
    if (team.type !== "choice") throw new Error(`team answered as ${team.type}`);
    expect(Object.keys(team.probabilities)).toEqual(["billing", "technical", "other"]);
    expect(sum(team.probabilities)).toBeCloseTo(1, 6);
    const best = Object.entries(team.probabilities).sort((a, b) => b[1] - a[1])[0]!;
    expect(team.choice).toBe(best[0]);
    expect(team.confidence).toBeCloseTo(best[1], 9);

    const billing = first.answers.billing!;
    if (billing.type !== "noul") throw new Error(`billing answered as ${billing.type}`);
    expect(billing.noul).toBeGreaterThan(0);
    expect(billing.noul).toBeLessThan(1);

    const urgency = first.answers.urgency!;
    if (urgency.type !== "score") throw new Error(`urgency answered as ${urgency.type}`);
    expect(urgency.legend).toEqual({ 0: "Can wait", 1: "This week", 2: "Today", 3: "Right now" });
    expect(Object.keys(urgency.probabilities)).toEqual(["0", "1", "2", "3"]);
    expect(sum(urgency.probabilities)).toBeCloseTo(1, 6);
    expect(urgency.score).toBeCloseTo(Object.entries(urgency.probabilities).reduce((s, [level, p]) => s + Number(level) * p, 0), 9);
    expect(urgency.confidence).toBeCloseTo(Math.max(...Object.values(urgency.probabilities)), 9);
    for (const p of [...Object.values(team.probabilities), ...Object.values(urgency.probabilities)]) expect(p).toBeGreaterThan(0);

    // 9 answers, each its text and the turn's closing token; each question's prompt holds the state.
    expect(first.usage.output_tokens).toBeGreaterThanOrEqual(9 * 2);
    expect(first.usage.input_tokens).toBeGreaterThan(3 * 20);
  });

  test("scored, not sampled: the same request gets the same numbers, and a question alone the same as in company", async () => {
    const again = await ollama.systemone(request);
    expect(again.usage).toEqual(first.usage);
    for (const name of ["team", "billing", "urgency"]) {
      const alone = await ollama.systemone({ ...request, questions: { [name]: request.questions[name]! } });
      const a = alone.answers[name] as unknown as Record<string, unknown>;
      const b = first.answers[name] as unknown as Record<string, unknown>;
      expect(a.type).toBe(b.type);
      if (typeof a.noul === "number") expect(a.noul).toBeCloseTo(b.noul as number, 3);
      if (a.probabilities) {
        for (const [key, p] of Object.entries(a.probabilities as Record<string, number>)) expect(p).toBeCloseTo((b.probabilities as Record<string, number>)[key]!, 3);
      }
    }
  });

  test("noul is the probability of true: a choice between true and false worded the same agrees", async () => {
    const asked = { instructions: "Is this message about a billing problem?" };
    const answered = await ollama.systemone({
      model: MODEL, state,
      questions: {
        noul: { type: "noul", ...asked, criteria: { true: "A billing issue", false: "Not billing" } },
        choice: { type: "choice", ...asked, criteria: { true: "A billing issue", false: "Not billing" } },
      },
    });
    const noul = answered.answers.noul as { noul: number };
    const choice = answered.answers.choice as { probabilities: Record<string, number> };
    // Equal up to batch-dependent rounding: the two questions decode in different batches.
    expect(noul.noul).toBeCloseTo(choice.probabilities.true!, 3);
  });

  test("a longer state costs input tokens for every question, not output tokens", async () => {
    const longer = await ollama.systemone({ ...request, state: { ...state, history: "The customer wrote twice before about the same charge. ".repeat(5) } });
    expect(longer.usage.output_tokens).toBe(first.usage.output_tokens);
    expect(longer.usage.input_tokens).toBeGreaterThan(first.usage.input_tokens + 3 * 30);
  });
});

describe("bad requests are 400s in Ollama's shape, and the model keeps answering", () => {
  test("missing or empty questions, too few criteria, an unknown type, past the bounds", async () => {
    const cases: Array<[unknown, string]> = [
      [{ model: MODEL, state: "x" }, "questions"],
      [{ model: MODEL, state: "x", questions: {} }, "questions must not be empty"],
      [{ model: MODEL, state: "x", questions: { q: { type: "choice", instructions: "?", criteria: { only: null } } } }, "at least 2 criteria"],
      [{ model: MODEL, state: "x", questions: { q: { type: "score", instructions: "?", criteria: ["one"] } } }, "at least 2 criteria"],
      [{ model: MODEL, state: "x", questions: { q: { type: "rank", instructions: "?" } } }, "questions.q.type"],
      [{ model: MODEL, state: "x", questions: Object.fromEntries(Array.from({ length: MAX_SYSTEMONE_QUESTIONS + 1 }, (_, i) => [`q${i}`, { type: "noul", instructions: "?" }])) }, `limit of ${MAX_SYSTEMONE_QUESTIONS}`],
      [{ model: MODEL, state: "x", questions: Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`q${i}`, { type: "score", instructions: "?", criteria: Array.from({ length: 30 }, (_, l) => `level ${l}`) }])) }, `limit of ${MAX_SYSTEMONE_ANSWERS}`],
      [{ model: MODEL, state: "word ".repeat(1500), questions: { q: { type: "noul", instructions: "?" } } }, "does not fit the context"],
    ];
    for (const [body, words] of cases) {
      const { status, message } = await refused(body);
      expect(status).toBe(400);
      expect(typeof message).toBe("string");
      expect(message as string).toContain(words);
    }
  });

  test("an embedding model is refused, an unknown model is a 404; the model still answers", async () => {
    const embedder = await refused({ ...request, model: EMBEDDER });
    expect(embedder.status).toBe(400);
    expect(embedder.message).toBe(`"${EMBEDDER}" does not support completion`);
    const unknown = await refused({ ...request, model: "no-such-model" });
    expect(unknown.status).toBe(404);
    expect(unknown.message).toContain("not found");
    expect((await ollama.systemone({ model: MODEL, state: "ok", questions: { q: { type: "noul", instructions: "fine?" } } })).answers.q!.type).toBe("noul");
  });
});
