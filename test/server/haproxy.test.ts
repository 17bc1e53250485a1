// README's HAProxy recipe, run as written (scripts/haproxy-recipe.ts: the configuration is read out of
// README.md, only the replicas' and the listener's addresses change): HAProxy (Debian's package) fronts
// two `llamux serve` processes, and 4 agent sessions of 4 turns each, with Claude Code's, Codex's and the
// generic session header, must read at least 90% of every later turn's prompt from the cache. The same
// replicas behind round-robin (the recipe with its balance lines changed) must read less. Skipped where
// haproxy is not installed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { ensureModel } from "../../scripts/gen-models.ts";
import { HAPROXY, Haproxy, haproxyInstalled, localHaproxyConfig as localConfig, readmeHaproxyConfig, roundRobinConfig as roundRobin } from "../../scripts/haproxy-recipe.ts";
import { freePort, type RunningServer, startServer, waitUntilReady } from "./serve-fixture.ts";

const haveHaproxy = haproxyInstalled();
if (!haveHaproxy) console.warn(`skipping the HAProxy recipe test: ${HAPROXY} is not installed (apt-get install haproxy)`);

/** Each session names itself the way its agent does. */
const SESSION_HEADERS = ["X-Claude-Code-Session-Id", "session_id", "x-session-id", "x-session-id"];
const SESSIONS = 4;
const TURNS = 4;

/** A session's own long context (nothing shared between sessions, so only its replica can have it cached). */
function systemPrompt(session: number): string {
  const words = Array.from({ length: 300 }, (_, i) => `s${session}w${(i * 7919 + session * 104729) % 1000}`);
  return `You are assistant ${session}. Notes: ${words.join(" ")}`;
}

/** Runs every session's turns in order (session after session) and returns each later turn's cached share. */
async function laterTurnCacheShares(baseURL: string, tag: string): Promise<number[]> {
  const shares: number[] = [];
  for (let session = 0; session < SESSIONS; session++) {
    const client = new OpenAI({
      baseURL: `${baseURL}/v1`, apiKey: "unused", defaultHeaders: { [SESSION_HEADERS[session]!]: `${tag}-session-${session}` },
    });
    // the tag first: nothing of a run's prompts is cached from the run before
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "system", content: `${tag}: ${systemPrompt(session)}` }];
    for (let turn = 0; turn < TURNS; turn++) {
      messages.push({ role: "user", content: `Turn ${turn}: what next?` });
      const reply = await client.chat.completions.create({ model: "tiny", messages, max_tokens: 8, temperature: 0 });
      messages.push({ role: "assistant", content: reply.choices[0]!.message.content ?? "" });
      if (turn > 0) shares.push((reply.usage!.prompt_tokens_details?.cached_tokens ?? 0) / reply.usage!.prompt_tokens);
    }
  }
  return shares;
}

describe.skipIf(!haveHaproxy)("README's HAProxy recipe with two llamux replicas", () => {
  const replicas: RunningServer[] = [];
  let recipe: string;

  beforeAll(async () => {
    recipe = readmeHaproxyConfig();
    const model = await ensureModel("tiny-llama");
    for (let i = 0; i < 2; i++) {
      replicas.push(await startServer([model, "--profile", "b", "--served-model-name", "tiny", "--max-model-len", "4096", "--max-num-seqs", "4", "--threads", "1"]));
    }
    for (const replica of replicas) await waitUntilReady(replica);
  }, 180_000);

  afterAll(async () => {
    for (const replica of replicas) await replica.stop();
  });

  test("sessions stay on their replica: later turns read at least 90% of their prompt from the cache, round-robin less", async () => {
    const ports = replicas.map((r) => r.port);
    const port = await freePort();
    const affinity = await Haproxy.start(localConfig(recipe, port, ports), port);
    let sticky: number[];
    try {
      sticky = await laterTurnCacheShares(affinity.url, "affinity");
    } finally {
      await affinity.stop();
    }
    const rrPort = await freePort();
    const plain = await Haproxy.start(roundRobin(localConfig(recipe, rrPort, ports)), rrPort);
    let rotated: number[];
    try {
      rotated = await laterTurnCacheShares(plain.url, "round-robin");
    } finally {
      await plain.stop();
    }
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    console.log(`later turns' cached share: affinity ${sticky.map((s) => s.toFixed(2)).join(" ")} (mean ${mean(sticky).toFixed(3)}); ` +
      `round-robin ${rotated.map((s) => s.toFixed(2)).join(" ")} (mean ${mean(rotated).toFixed(3)})`);
    expect(sticky).toHaveLength(SESSIONS * (TURNS - 1));
    for (const share of sticky) expect(share).toBeGreaterThanOrEqual(0.9);
    expect(mean(rotated)).toBeLessThan(mean(sticky));
  }, 300_000);

  test("a request without a session header is served through the least-connections backend", async () => {
    const port = await freePort();
    const proxy = await Haproxy.start(localConfig(recipe, port, replicas.map((r) => r.port)), port);
    try {
      const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: "unused" });
      const reply = await client.chat.completions.create({ model: "tiny", messages: [{ role: "user", content: "Hi" }], max_tokens: 2 });
      expect(reply.choices).toHaveLength(1);
    } finally {
      await proxy.stop();
    }
  }, 60_000);
});
