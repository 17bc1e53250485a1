// The interactive `run` in a real terminal: tmux runs it, the test types keys and reads the screen.
// Checks streaming, /set, /show, Ctrl+C stopping an answer, and /bye.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { mainScript, NO_SERVER } from "./cli-fixture.ts";

const session = `llamux-test-${process.pid}`;
let dir: string;

function tmux(...args: string[]): string {
  const result = Bun.spawnSync(["tmux", ...args], { stdout: "pipe", stderr: "pipe" });
  return result.stdout.toString();
}

const screen = () => tmux("capture-pane", "-p", "-J", "-t", session, "-S", "-200");
const keys = (...k: string[]) => tmux("send-keys", "-t", session, ...k);
const alive = () => Bun.spawnSync(["tmux", "has-session", "-t", session]).exitCode === 0;

/** Waits until the screen satisfies `check` (generous: the machine may be busy). */
async function waitFor(check: (text: string) => boolean, what: string, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = screen();
    if (check(text)) return text;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; screen:\n${text}`);
    await Bun.sleep(100);
  }
}

const prompts = (text: string) => text.split("\n").filter((line) => line.startsWith(">>> ")).length;

beforeAll(async () => {
  const model = await ensureModel("tiny-llama");
  dir = mkdtempSync(join(tmpdir(), "llamux-tty-"));
  const command = `env LLAMUX_HOST=${NO_SERVER} LLAMUX_MODELS=${join(dir, "store")} LLAMUX_LOG_LEVEL=warn ${process.execPath} ${mainScript} run ${model}; echo EXITED $?; sleep 30`;
  tmux("new-session", "-d", "-s", session, "-x", "150", "-y", "50", command);
});

afterAll(() => {
  tmux("kill-session", "-t", session);
  rmSync(dir, { recursive: true, force: true });
});

test("interactive run: /set, a streamed answer, Ctrl+C, /show, /bye", async () => {
  await waitFor((text) => text.includes(">>> "), "the prompt");
  keys("/set parameter num_predict 6", "Enter");
  await waitFor((text) => text.includes("Set parameter 'num_predict' to '6'"), "/set parameter");
  keys("/set parameter temperature nope", "Enter");
  await waitFor((text) => text.includes("Couldn't set parameter"), "a rejected parameter");

  keys("Hello there", "Enter");
  await waitFor((text) => prompts(text) >= 4, "the short answer to end");

  // an answer without a limit streams until Ctrl+C stops it
  keys("/set parameter num_predict -1", "Enter");
  await waitFor((text) => text.includes("Set parameter 'num_predict' to '-1'"), "/set parameter");
  const before = prompts(screen());
  keys("Tell me a long story", "Enter");
  const answerOf = (text: string) => text.slice(text.lastIndexOf("Tell me a long story") + 20).trim();
  const early = answerOf(await waitFor((text) => answerOf(text).length > 0, "the answer to start"));
  const later = answerOf(await waitFor((text) => answerOf(text).length > early.length + 5, "the answer to grow"));
  expect(later.startsWith(early.slice(0, 3))).toBe(true);
  expect(prompts(screen())).toBe(before); // still answering: no new prompt yet
  keys("C-c");
  await waitFor((text) => prompts(text) > before, "the prompt after Ctrl+C", 20_000);
  expect(alive()).toBe(true);

  keys("/show parameters", "Enter");
  await waitFor((text) => /User defined parameters:\nnum_predict +-1/.test(text), "/show parameters");
  keys("/set system You answer in riddles.", "Enter");
  await waitFor((text) => text.includes("Set system message."), "/set system");
  keys("/show system", "Enter");
  await waitFor((text) => /\/show system\nYou answer in riddles\./.test(text), "/show system");
  keys("/clear", "Enter");
  await waitFor((text) => text.includes("Cleared session context"), "/clear");
  keys("/bye", "Enter");
  await waitFor((text) => text.includes("EXITED 0"), "the exit");
}, 180_000);
