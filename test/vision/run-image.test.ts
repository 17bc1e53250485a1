// `llamux run` with images in a real terminal (tmux): a model file with its mmproj-*.gguf beside it,
// `/image PATH QUESTION` and an image path typed in a prompt, with `/set verbose` showing that the
// prompt's token count includes the image's tokens.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { mainScript, NO_SERVER } from "../cli/cli-fixture.ts";
import { TerminalSession } from "../cli/terminal-session.ts";

const IMAGE_TOKENS = 16;
const terminal = new TerminalSession(`llamux-vision-${process.pid}`, 300);
const jpeg = join(import.meta.dir, "..", "fixtures", "images", "python-16.jpg");
let dir: string;

const promptCounts = (text: string) => [...text.matchAll(/prompt eval count:\s+(\d+) token/g)].map((m) => Number(m[1]));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "llamux-vision-tty-"));
  symlinkSync(await ensureModel("tiny-llama"), join(dir, "tiny-chat.gguf"));
  symlinkSync(await ensureModel("tiny-mmproj"), join(dir, "mmproj-tiny-chat.gguf"));
  const command = `env LLAMUX_HOST=${NO_SERVER} LLAMUX_MODELS=${join(dir, "store")} LLAMUX_LOG_LEVEL=warn ${process.execPath} ${mainScript} run ${join(dir, "tiny-chat.gguf")}; echo EXITED $?; sleep 30`;
  terminal.start(command, 200, 60);
});

afterAll(() => {
  terminal.kill();
  rmSync(dir, { recursive: true, force: true });
});

test("run: /image and a typed image path reach the model, their tokens counted", async () => {
  await terminal.waitFor((text) => text.includes(">>> "), "the prompt");
  terminal.keys("/set parameter num_predict 3", "Enter");
  await terminal.waitFor((text) => text.includes("Set parameter 'num_predict' to '3'"), "/set parameter");
  terminal.keys("/set verbose", "Enter");
  await terminal.waitFor((text) => text.includes("Set 'verbose' mode."), "/set verbose");

  terminal.keys("What is it?", "Enter");
  await terminal.waitFor((text) => promptCounts(text).length === 1, "the text-only answer");
  terminal.keys("/clear", "Enter");
  await terminal.waitFor((text) => text.includes("Cleared session context"), "/clear");

  terminal.keys(`/image ${jpeg} What is it?`, "Enter");
  await terminal.waitFor((text) => text.includes(`Added image '${jpeg}'`), "the image to be added");
  const withImage = await terminal.waitFor((text) => promptCounts(text).length === 2, "the answer about the image");
  const [textOnly, imageTurn] = promptCounts(withImage);
  expect(imageTurn! - textOnly!).toBeGreaterThanOrEqual(IMAGE_TOKENS);
  expect(imageTurn! - textOnly!).toBeLessThanOrEqual(IMAGE_TOKENS + 2);
  expect(withImage).not.toContain("Error");

  terminal.keys("/clear", "Enter");
  terminal.keys(`Describe ${jpeg}`, "Enter");
  const typed = await terminal.waitFor((text) => promptCounts(text).length === 3, "the answer about the typed image path");
  expect(promptCounts(typed)[2]).toBeGreaterThan(IMAGE_TOKENS);

  terminal.keys("/bye", "Enter");
  await terminal.waitFor((text) => text.includes("EXITED 0"), "the exit");
}, 180_000);
