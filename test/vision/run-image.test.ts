// `llamux run` with images in a real terminal (tmux): a model file with its mmproj-*.gguf beside it,
// `/image PATH QUESTION` and an image path typed in a prompt, with `/set verbose` showing that the
// prompt's token count includes the image's tokens.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureModel } from "../../scripts/gen-models.ts";
import { mainScript, NO_SERVER } from "../cli/cli-fixture.ts";

const IMAGE_TOKENS = 16;
const session = `llamux-vision-${process.pid}`;
const jpeg = join(import.meta.dir, "..", "fixtures", "images", "python-16.jpg");
let dir: string;

function tmux(...args: string[]): string {
  return Bun.spawnSync(["tmux", ...args], { stdout: "pipe", stderr: "pipe" }).stdout.toString();
}
const screen = () => tmux("capture-pane", "-p", "-J", "-t", session, "-S", "-300");
const keys = (...k: string[]) => tmux("send-keys", "-t", session, ...k);

async function waitFor(check: (text: string) => boolean, what: string, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = screen();
    if (check(text)) return text;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; screen:\n${text}`);
    await Bun.sleep(100);
  }
}

const promptCounts = (text: string) => [...text.matchAll(/prompt eval count:\s+(\d+) token/g)].map((m) => Number(m[1]));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "llamux-vision-tty-"));
  symlinkSync(await ensureModel("tiny-llama"), join(dir, "tiny-chat.gguf"));
  symlinkSync(await ensureModel("tiny-mmproj"), join(dir, "mmproj-tiny-chat.gguf"));
  const command = `env LLAMUX_HOST=${NO_SERVER} LLAMUX_MODELS=${join(dir, "store")} LLAMUX_LOG_LEVEL=warn ${process.execPath} ${mainScript} run ${join(dir, "tiny-chat.gguf")}; echo EXITED $?; sleep 30`;
  tmux("new-session", "-d", "-s", session, "-x", "200", "-y", "60", command);
});

afterAll(() => {
  tmux("kill-session", "-t", session);
  rmSync(dir, { recursive: true, force: true });
});

test("run: /image and a typed image path reach the model, their tokens counted", async () => {
  await waitFor((text) => text.includes(">>> "), "the prompt");
  keys("/set parameter num_predict 3", "Enter");
  await waitFor((text) => text.includes("Set parameter 'num_predict' to '3'"), "/set parameter");
  keys("/set verbose", "Enter");
  await waitFor((text) => text.includes("Set 'verbose' mode."), "/set verbose");

  keys("What is it?", "Enter");
  await waitFor((text) => promptCounts(text).length === 1, "the text-only answer");
  keys("/clear", "Enter");
  await waitFor((text) => text.includes("Cleared session context"), "/clear");

  keys(`/image ${jpeg} What is it?`, "Enter");
  await waitFor((text) => text.includes(`Added image '${jpeg}'`), "the image to be added");
  const withImage = await waitFor((text) => promptCounts(text).length === 2, "the answer about the image");
  const [textOnly, imageTurn] = promptCounts(withImage);
  expect(imageTurn! - textOnly!).toBeGreaterThanOrEqual(IMAGE_TOKENS);
  expect(imageTurn! - textOnly!).toBeLessThanOrEqual(IMAGE_TOKENS + 2);
  expect(withImage).not.toContain("Error");

  keys("/clear", "Enter");
  keys(`Describe ${jpeg}`, "Enter");
  const typed = await waitFor((text) => promptCounts(text).length === 3, "the answer about the typed image path");
  expect(promptCounts(typed)[2]).toBeGreaterThan(IMAGE_TOKENS);

  keys("/bye", "Enter");
  await waitFor((text) => text.includes("EXITED 0"), "the exit");
}, 180_000);
