// `llamux keys` as a person runs it: the secret printed once and never written, the file readable by its
// owner only, list without secrets or hashes, and clear refusals of bad names, scopes and duplicates.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const main = join(import.meta.dir, "..", "..", "src", "main.ts");
const dir = mkdtempSync(join(tmpdir(), "llamux-keys-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function keys(args: string[]) {
  // XDG_CONFIG_HOME decides the default file
  const child = Bun.spawn([process.execPath, main, "keys", ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, XDG_CONFIG_HOME: dir } });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

test("create prints the secret once and stores only its hash; list shows the key without either", async () => {
  const made = await keys(["create", "alice", "--scope", "chat,mcp", "--models", "llama3.2", "--rpm", "60", "--tpm", "1000", "--tokens-per-day", "5000", "--max-parallel", "2", "--weight", "3", "--expires", "30d"]);
  expect(made.code).toBe(0);
  const secret = made.stdout.trim();
  expect(secret).toMatch(/^llx-[0-9a-f]{8}-[A-Za-z0-9_-]{43}$/);
  const path = join(dir, "llamux", "keys.json");
  const text = readFileSync(path, "utf8");
  expect(text).not.toContain(secret.slice(13));
  expect(statSync(path).mode & 0o777).toBe(0o600);
  const [entry] = JSON.parse(text).keys;
  expect(entry).toMatchObject({ name: "alice", id: secret.slice(4, 12), scopes: ["chat", "mcp"], models: ["llama3.2"], rpm: 60, tpm: 1000, tokens_per_day: 5000, max_parallel: 2, weight: 3 });
  expect(entry.hash).toStartWith("$argon2id$");
  expect(Date.parse(entry.expires_at) - Date.parse(entry.created_at)).toBeGreaterThan(29 * 86_400_000);

  const listed = await keys(["list", "--json"]);
  expect(JSON.parse(listed.stdout)[0]).not.toHaveProperty("hash");
  expect(listed.stdout).not.toContain(secret);
  const table = await keys(["list"]);
  expect(table.stdout).toContain("alice");
  expect(table.stdout).toContain("rpm 60, tpm 1000, 5000 tokens/day, 2 parallel, weight 3");
});

test("refusals: a taken name, an unknown scope, a bad name, a create flag elsewhere, an unknown key to revoke", async () => {
  const taken = await keys(["create", "alice"]);
  expect(taken.code).toBe(1);
  expect(taken.stderr).toContain('Cannot create key "alice": a key of that name exists');
  const scope = await keys(["create", "bob", "--scope", "root"]);
  expect(scope.code).toBe(2);
  expect(scope.stderr).toContain("--scope must be one of chat, embeddings, audio, admin, mcp");
  expect((await keys(["create", "bad name"])).stderr).toContain('Cannot use key name "bad name"');
  expect((await keys(["list", "--rpm", "3"])).stderr).toContain('--rpm is an option of "keys create"');
  const revoke = await keys(["revoke", "nobody"]);
  expect(revoke.code).toBe(1);
  expect(revoke.stderr).toContain('Cannot revoke key "nobody": no such key');
  expect((await keys(["revoke", "alice"])).code).toBe(0);
  expect(JSON.parse((await keys(["list", "--json"])).stdout)).toEqual([]);
});
