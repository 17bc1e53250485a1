// The interactive `run` in a real terminal: tmux runs it, the test types keys and reads the screen.
// Checks streaming, /set, /show, Ctrl+C stopping an answer, and /bye.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { mainScript, NO_SERVER } from "./cli-fixture.ts";
import { TerminalSession } from "./terminal-session.ts";

const terminal = new TerminalSession(`llamux-test-${process.pid}`);
let dir: string;

const prompts = (text: string) => text.split("\n").filter((line) => line.startsWith(">>> ")).length;

beforeAll(async () => {
  const model = await ensureModel("tiny-llama");
  dir = mkdtempSync(join(tmpdir(), "llamux-tty-"));
  const command = `env LLAMUX_HOST=${NO_SERVER} LLAMUX_MODELS=${join(dir, "store")} LLAMUX_LOG_LEVEL=warn ${process.execPath} ${mainScript} run ${model}; echo EXITED $?; sleep 30`;
  terminal.start(command, 150, 50);
});

afterAll(() => {
  terminal.kill();
  rmSync(dir, { recursive: true, force: true });
});

test("interactive run: /set, a streamed answer, Ctrl+C, /show, /bye", async () => {
  await terminal.waitFor((text) => text.includes(">>> "), "the prompt");
  terminal.keys("/set parameter num_predict 6", "Enter");
  await terminal.waitFor((text) => text.includes("Set parameter 'num_predict' to '6'"), "/set parameter");
  terminal.keys("/set parameter temperature nope", "Enter");
  await terminal.waitFor((text) => text.includes("Couldn't set parameter"), "a rejected parameter");

  terminal.keys("Hello there", "Enter");
  await terminal.waitFor((text) => prompts(text) >= 4, "the short answer to end");

  // an answer without a limit streams until Ctrl+C stops it
  terminal.keys("/set parameter num_predict -1", "Enter");
  await terminal.waitFor((text) => text.includes("Set parameter 'num_predict' to '-1'"), "/set parameter");
  const before = prompts(terminal.screen());
  terminal.keys("Tell me a long story", "Enter");
  // nothing until the typed line is on the screen (tmux may show it half echoed)
  const answerOf = (text: string) => {
    const asked = text.lastIndexOf(">>> Tell me a long story");
    return asked < 0 ? "" : text.slice(asked + ">>> Tell me a long story".length).trim();
  };
  const early = answerOf(await terminal.waitFor((text) => answerOf(text).length > 0, "the answer to start"));
  const later = answerOf(await terminal.waitFor((text) => answerOf(text).length > early.length + 5, "the answer to grow"));
  // the same answer, longer (both texts shown if not)
  expect({ early, later, sameAnswer: later.startsWith(early.slice(0, 3)) }).toMatchObject({ sameAnswer: true });
  expect(prompts(terminal.screen())).toBe(before); // still answering: no new prompt yet
  terminal.keys("C-c");
  await terminal.waitFor((text) => prompts(text) > before, "the prompt after Ctrl+C", 20_000);
  expect(terminal.alive()).toBe(true);

  terminal.keys("/show parameters", "Enter");
  await terminal.waitFor((text) => /User defined parameters:\nnum_predict +-1/.test(text), "/show parameters");
  terminal.keys("/set system You answer in riddles.", "Enter");
  await terminal.waitFor((text) => text.includes("Set system message."), "/set system");
  terminal.keys("/show system", "Enter");
  await terminal.waitFor((text) => /\/show system\nYou answer in riddles\./.test(text), "/show system");
  terminal.keys("/clear", "Enter");
  await terminal.waitFor((text) => text.includes("Cleared session context"), "/clear");
  terminal.keys("/bye", "Enter");
  await terminal.waitFor((text) => text.includes("EXITED 0"), "the exit");
}, 180_000);
