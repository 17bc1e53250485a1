// Writes a keys file for tests, with real argon2id hashes of fresh secrets (as `llamux keys create` makes them).
import { writeFileSync } from "node:fs";
import type { KeyEntry } from "../../src/keys/key-file.ts";
import { hashSecret, newKeySecret } from "../../src/keys/key-secret.ts";

export type KeySpec = Omit<KeyEntry, "id" | "hash" | "created_at"> & { created_at?: string };

/** Hashes a secret per spec; the same secrets can be written again later with other settings (rewriteKeys). */
export async function makeKeys(specs: KeySpec[]): Promise<{ entries: KeyEntry[]; secrets: Record<string, string> }> {
  const secrets: Record<string, string> = {};
  const entries: KeyEntry[] = [];
  for (const spec of specs) {
    const { id, secret } = newKeySecret();
    secrets[spec.name] = secret;
    entries.push({ created_at: new Date().toISOString(), ...spec, id, hash: await hashSecret(secret) });
  }
  return { entries, secrets };
}

export function writeKeys(path: string, entries: KeyEntry[]): void {
  writeFileSync(path, JSON.stringify({ version: 1, keys: entries }, null, 2));
}
