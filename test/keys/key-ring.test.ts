// The keys file as a server reads it, without a server: a clear error for a file that cannot be read at
// start, a change read again (new keys work, revoked ones stop), a corrupt change logged with the last good
// set kept, and the secrets' slow hash paid once per key.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeyFileError, parseKeyFile, readKeyFile } from "../../src/keys/key-file.ts";
import { KeyRing } from "../../src/keys/key-ring.ts";
import { KeyAccess } from "../../src/keys/key-access.ts";
import { KeyRefusal } from "../../src/keys/key-refusal.ts";
import { makeKeys, writeKeys } from "./key-fixture.ts";

const dir = mkdtempSync(join(tmpdir(), "llamux-key-ring-"));
let keys: Awaited<ReturnType<typeof makeKeys>>;

beforeAll(async () => {
  keys = await makeKeys([{ name: "alice", scopes: ["chat"] }, { name: "bob", scopes: ["admin"] }]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the keys file", () => {
  test("names what is wrong, with the file", () => {
    const good = { version: 1, keys: [keys.entries[0]] };
    const broken = (value: unknown) => () => parseKeyFile(JSON.stringify(value), "/k.json");
    expect(() => parseKeyFile("{", "/k.json")).toThrow(/^Cannot read keys file "\/k.json": not JSON/);
    expect(broken({ ...good, version: 2 })).toThrow('Cannot read keys file "/k.json": version:');
    expect(broken({ version: 1, keys: [{ ...keys.entries[0], scopes: ["root"] }] })).toThrow("keys[0].scopes[0]");
    expect(broken({ version: 1, keys: [{ ...keys.entries[0], rpm: 0 }] })).toThrow("keys[0].rpm");
    expect(broken({ version: 1, keys: [keys.entries[0], { ...keys.entries[1], name: "alice" }] })).toThrow('the name "alice" is used twice');
    expect(broken({ version: 1, keys: [{ ...keys.entries[0], hash: "plain" }] })).toThrow("argon2");
    expect(broken({ version: 1, keys: [{ ...keys.entries[0], name: "key-0123456789abcdef" }] })).toThrow("--api-key");
    expect(parseKeyFile(JSON.stringify(good), "/k.json").keys[0]!.name).toBe("alice");
    expect(readKeyFile(join(dir, "none.json"))).toBeUndefined();
  });

  test("a file that cannot be read stops the ring at start; --keys-file must exist; the default may be missing", () => {
    const corrupt = join(dir, "corrupt.json");
    writeFileSync(corrupt, '{"version": 1, "keys": [');
    expect(() => new KeyRing(corrupt)).toThrow(KeyFileError);
    expect(() => new KeyRing(join(dir, "missing.json"), { required: true })).toThrow(/no such file \(create a key with: llamux keys create NAME --keys-file/);
    const waiting = new KeyRing(join(dir, "later.json"));
    expect(waiting.active).toBe(false);
    expect(new KeyAccess({ ring: waiting }).required).toBe(false);
  });
});

describe("KeyRing", () => {
  test("reads a change, keeps the last good set when a change is corrupt or the file goes, and never opens up", async () => {
    const path = join(dir, "keys.json");
    const ring = new KeyRing(join(dir, "keys.json"));
    const access = new KeyAccess({ ring });
    expect(access.required).toBe(false);
    // The file appears after start: from now on keys are needed.
    writeKeys(path, [keys.entries[0]!]);
    ring.reload();
    expect(access.required).toBe(true);
    expect((await access.authenticate([keys.secrets.alice!]))?.owner).toBe("alice");
    expect(await access.authenticate([keys.secrets.bob!])).toBeUndefined();

    // bob added, alice revoked
    writeKeys(path, [keys.entries[1]!]);
    ring.reload();
    expect(await access.authenticate([keys.secrets.alice!])).toBeUndefined();
    expect((await access.authenticate(["placeholder", keys.secrets.bob!]))?.scopes.has("admin")).toBe(true);

    // A half-written file: the last good set stays.
    writeFileSync(path, '{"version": 1, "keys": [{"name": "eve"');
    ring.reload();
    expect((await access.authenticate([keys.secrets.bob!]))?.owner).toBe("bob");
    rmSync(path);
    ring.reload();
    expect((await access.authenticate([keys.secrets.bob!]))?.owner).toBe("bob");
    // An empty set refuses every named key; the server stays closed.
    writeKeys(path, []);
    ring.reload();
    expect(await access.authenticate([keys.secrets.bob!])).toBeUndefined();
    expect(access.required).toBe(true);
  });

  test("a key's slow hash is paid once; wrong secrets are refused without a second slow check; a re-made key is checked again", async () => {
    const path = join(dir, "cache.json");
    writeKeys(path, keys.entries);
    const ring = new KeyRing(path);
    const first = await Promise.all([ring.check(keys.secrets.alice!), ring.check(keys.secrets.alice!)]);
    expect(first.map((c) => (c && "grant" in c ? c.grant.owner : undefined))).toEqual(["alice", "alice"]);
    expect(ring.secrets.slowChecks).toBe(1);
    for (let i = 0; i < 5; i++) expect(await ring.check(keys.secrets.alice!)).toMatchObject({ grant: { owner: "alice" } });
    expect(ring.secrets.slowChecks).toBe(1);
    // a wrong secret with a known id: one slow check, then remembered
    const wrong = `${keys.secrets.alice!.slice(0, 13)}${"A".repeat(43)}`;
    expect(await ring.check(wrong)).toBeUndefined();
    expect(await ring.check(wrong)).toBeUndefined();
    expect(ring.secrets.slowChecks).toBe(2);
    // an unknown id or a secret of another shape costs no slow check at all
    expect(await ring.check("llx-ffffffff-" + "A".repeat(43))).toBeUndefined();
    expect(await ring.check("secret")).toBeUndefined();
    expect(ring.secrets.slowChecks).toBe(2);
    // alice re-made under the same id with another secret's hash: the remembered pass no longer counts
    writeKeys(path, [{ ...keys.entries[0]!, hash: keys.entries[1]!.hash }]);
    ring.reload();
    expect(await ring.check(keys.secrets.alice!)).toBeUndefined();
    expect(ring.secrets.slowChecks).toBe(3);
  });

  test("an expired key is refused with a 401 that says so", async () => {
    const path = join(dir, "expired.json");
    writeKeys(path, [{ ...keys.entries[0]!, expires_at: "2020-01-01T00:00:00.000Z" }]);
    const access = new KeyAccess({ ring: new KeyRing(path) });
    const refused = await access.authenticate([keys.secrets.alice!]).catch((error) => error);
    expect(refused).toBeInstanceOf(KeyRefusal);
    expect(refused.status).toBe(401);
    expect(refused.message).toContain('API key "alice" expired at 2020-01-01T00:00:00.000Z');
  });
});
