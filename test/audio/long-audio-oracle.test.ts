// Audio longer than one 30-second chunk against llama.cpp's own `llama-mtmd-cli`, built from the same
// pinned source: the tiny llama model with the tiny Qwen2-Audio-type projector, greedy, over real HTTP.
// Two 36-second clips share their first 30 s (a tone) and differ in their last 6 s (speech, another tone):
// each chunk must be encoded from its own samples, so both replies match the oracle's, token for token.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { readFileSync } from "node:fs";
import { ensureModel } from "../../scripts/gen-models.ts";
import { startProfileApps, type ProfileApps } from "../fixtures/profile-apps.ts";
import { ensureLlamaTool } from "../fixtures/llama-tools.ts";
import { AUDIO_TOKENS_PER_CHUNK, longClipWavPath } from "./audio-fixtures.ts";

const MODEL = "tiny-audio";
const PROMPT = "What was said?";
const TOKENS = 8;
let apps: ProfileApps;
let modelPath: string;
let projectorPath: string;
let mtmdCli: string;

beforeAll(async () => {
  [modelPath, projectorPath, mtmdCli] = await Promise.all([ensureModel("tiny-llama"), ensureModel("tiny-audio-mmproj"), ensureLlamaTool("llama-mtmd-cli")]);
  apps = startProfileApps([{ path: modelPath, name: MODEL, projectorPath }], { parallel: 2, contextPerSequence: 2048, threads: 2 });
}, 1_800_000);

afterAll(() => apps?.stop());

/** llama-mtmd-cli's greedy reply: it prints a newline after the prompt, then the generated text. */
async function oracleReply(clip: string): Promise<string> {
  const child = Bun.spawn([mtmdCli, "-m", modelPath, "--mmproj", projectorPath, "--audio", clip, "-p", PROMPT, "-n", String(TOKENS), "--temp", "0", "-t", "2", "-c", "2048", "--jinja"], { stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (exitCode !== 0) throw new Error(`llama-mtmd-cli failed (${exitCode}): ${stderr.slice(-2000)}`);
  return stdout.trim();
}

async function llamuxReply(clip: string): Promise<{ text: string; promptTokens: number }> {
  const client = new OpenAI({ baseURL: `${apps.base.b}/v1`, apiKey: "placeholder", maxRetries: 0 });
  const reply = await client.chat.completions.create({
    model: MODEL, max_tokens: TOKENS, temperature: 0,
    messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: readFileSync(clip).toString("base64"), format: "wav" } }, { type: "text", text: PROMPT }] }],
  });
  return { text: reply.choices[0]!.message.content ?? "", promptTokens: reply.usage!.prompt_tokens };
}

describe("a 36-second clip (two chunks) against llama-mtmd-cli", () => {
  const clips = [longClipWavPath({ speech: "The quick brown fox jumps over the lazy dog." }), longClipWavPath({ toneHz: 220 })];

  test("each clip's reply is the oracle's; both chunks count their tokens", async () => {
    for (const clip of clips) {
      const [oracle, llamux] = await Promise.all([oracleReply(clip), llamuxReply(clip)]);
      expect(oracle.length).toBeGreaterThan(0);
      expect(llamux.text.trim()).toBe(oracle);
      expect(llamux.promptTokens).toBeGreaterThanOrEqual(2 * AUDIO_TOKENS_PER_CHUNK);
    }
  }, 600_000);

  test("clips that differ only after 30 s get different replies, as they do from the oracle", async () => {
    const [first, second] = (await Promise.all(clips.map(oracleReply))) as [string, string];
    expect(first).not.toBe(second);
    const replies = [];
    for (const clip of clips) replies.push((await llamuxReply(clip)).text.trim());
    expect(replies).toEqual([first, second]);
  }, 600_000);
});
