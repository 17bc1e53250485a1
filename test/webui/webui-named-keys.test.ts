// The web UI on a server with named keys: the page asks for a key, and the Developer tab shows that key's
// usage and limits; an admin key sees every key's. Debian's Chromium against a real `llamux serve`.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { startServer, type RunningServer } from "../server/serve-fixture.ts";
import { makeKeys, writeKeys } from "../keys/key-fixture.ts";
import { launchChromium } from "./browser.ts";

const dir = mkdtempSync(join(tmpdir(), "llamux-webui-keys-"));
let server: RunningServer;
let browser: Browser;
let secrets: Record<string, string>;

beforeAll(async () => {
  const keys = await makeKeys([{ name: "alice", scopes: ["chat"], rpm: 30, tokens_per_day: 5000 }, { name: "root", scopes: ["admin"] }]);
  secrets = keys.secrets;
  writeKeys(join(dir, "keys.json"), keys.entries);
  server = await startServer(["--profile", "a", "--keys-file", join(dir, "keys.json")]);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function developerTabWith(key: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${server.baseUrl}/ui#developer`);
  const dialog = page.getByRole("dialog", { name: "API key needed" });
  await dialog.getByLabel("API key").fill(key);
  await dialog.getByRole("button", { name: "Save key" }).click();
  await page.getByRole("heading", { name: "Key usage" }).waitFor();
  return page;
}

test("a key sees its own usage and limits; an admin key sees every key's", async () => {
  // a request of alice's to count (a bad body: admitted, then refused by validation)
  await fetch(`${server.baseUrl}/api/chat`, { method: "POST", headers: { Authorization: `Bearer ${secrets.alice}` }, body: "{}" });
  const page = await developerTabWith(secrets.alice!);
  const rows = page.locator("tr.key-usage");
  await rows.first().waitFor();
  expect(await rows.count()).toBe(1);
  const row = await rows.first().innerText();
  expect(row).toContain("alice");
  expect(row).toContain("/ 5000 tokens");
  expect(row).toContain("1 / 30 requests");
  await page.close();

  const admin = await developerTabWith(secrets.root!);
  await admin.locator("tr.key-usage").nth(1).waitFor();
  expect(await admin.locator("tr.key-usage td:first-child").allInnerTexts()).toEqual(["alice", "root"]);
  await admin.close();
}, 60_000);
