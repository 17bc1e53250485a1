// The web UI on a server with an API key, in profile a (the UI is at /ui in every profile): the page
// asks for the key once, keeps it in the browser, and lists models through the OpenAI route.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { startServer, type RunningServer } from "../server/serve-fixture.ts";
import { launchChromium } from "./browser.ts";

const KEY = "webui-test-key";
let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  server = await startServer(["--profile", "a", "--api-key", KEY]);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

test("the page and its script need no key; the API does", async () => {
  expect((await fetch(`${server.baseUrl}/ui`)).status).toBe(200);
  expect((await fetch(`${server.baseUrl}/ui/app.js`)).status).toBe(200);
  expect((await fetch(`${server.baseUrl}/api/v1/server/status`)).status).toBe(401);
  // profile a keeps Ollama's own answer at /
  expect(await (await fetch(`${server.baseUrl}/`)).text()).not.toContain("/ui/app.js");
});

test("asks for the key once and keeps it in the browser", async () => {
  const page = await browser.newPage();
  await page.goto(`${server.baseUrl}/ui`);
  const dialog = page.getByRole("dialog", { name: "API key needed" });
  await dialog.waitFor();
  await dialog.getByLabel("API key").fill(KEY);
  await dialog.getByRole("button", { name: "Save key" }).click();
  await dialog.waitFor({ state: "hidden" });
  await page.getByText("0 models, 0 loaded").waitFor();
  expect(await page.evaluate<string | null>('localStorage.getItem("llamux.apiKey")')).toBe(KEY);

  // A reload finds the key: no question, and the API answers.
  await page.reload();
  await page.getByText("0 models, 0 loaded").waitFor();
  expect(await page.getByRole("dialog", { name: "API key needed" }).isVisible()).toBe(false);
  await page.getByRole("tab", { name: "Developer" }).click();
  await page.locator("dl.server-info").getByText("required (saved in this browser)").waitFor();
  await page.close();
});
