// The named keys' file: $XDG_CONFIG_HOME/llamux/keys.json (else ~/.config/llamux/keys.json), or --keys-file.
// `llamux keys` writes it (atomically, mode 0600); `llamux serve` reads it and reads it again when it changes.
//   {"version": 1, "keys": [{"name": "alice", "id": "3f9a1c2b", "hash": "$argon2id$...",
//     "scopes": ["chat"], "models": ["llama3.2"], "rpm": 60, "tpm": 100000, "tokens_per_day": 1000000,
//     "max_parallel": 2, "weight": 1, "created_at": "2025-01-01T00:00:00.000Z", "expires_at": "..."}]}
// Everything after "scopes" is optional: no models list means every model, no limit means none.
import { readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../store/atomic-file.ts";
import { KEY_SCOPES } from "./key-scopes.ts";

/** A file larger than this is refused unread (it would hold tens of thousands of keys). */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

/** Owners of plain --api-key keys look like this (middleware/api-key.ts); a named key may not take such a name. */
const PLAIN_KEY_OWNER = /^key-[0-9a-f]{16}$/;

export const keyNameSchema = z.string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "a key name is 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit")
  .refine((name) => !PLAIN_KEY_OWNER.test(name), "names of the form key-<16 hex digits> are kept for --api-key keys");

const count = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const isoDate = z.string().refine((text) => !Number.isNaN(Date.parse(text)), "expected an ISO 8601 date");

const keyEntrySchema = z.object({
  name: keyNameSchema,
  id: z.string().regex(/^[0-9a-f]{8}$/, "expected 8 hex digits"),
  hash: z.string().startsWith("$argon2", "expected an argon2 hash (made by `llamux keys create`)"),
  scopes: z.array(z.enum(KEY_SCOPES)),
  models: z.array(z.string().min(1)).optional(),
  rpm: count.optional(),
  tpm: count.optional(),
  tokens_per_day: count.optional(),
  max_parallel: count.optional(),
  weight: z.number().positive().max(1000).optional(),
  created_at: isoDate,
  expires_at: isoDate.optional(),
});

const keyFileSchema = z.object({ version: z.literal(1), keys: z.array(keyEntrySchema) });

export type KeyEntry = z.infer<typeof keyEntrySchema>;
export type KeyFile = z.infer<typeof keyFileSchema>;

export class KeyFileError extends Error {
  override name = "KeyFileError";
}

export function emptyKeyFile(): KeyFile {
  return { version: 1, keys: [] };
}

/** $XDG_CONFIG_HOME/llamux/keys.json, else ~/.config/llamux/keys.json. */
export function defaultKeysPath(env: Record<string, string | undefined> = process.env): string {
  const config = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(config, "llamux", "keys.json");
}

/** The usage file beside a keys file: keys.json -> keys.usage.json. */
export function usagePathFor(keysPath: string): string {
  return keysPath.replace(/(\.json)?$/, ".usage.json");
}

function issuePath(path: PropertyKey[]): string {
  return path.map((part) => (typeof part === "number" ? `[${part}]` : `.${String(part)}`)).join("").replace(/^\./, "");
}

/** Parses and checks a keys file's text; every problem is a KeyFileError naming the file and the field. */
export function parseKeyFile(text: string, path: string): KeyFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new KeyFileError(`Cannot read keys file "${path}": not JSON (${(error as Error).message})`);
  }
  const parsed = keyFileSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new KeyFileError(`Cannot read keys file "${path}": ${issuePath(issue.path) || "the file"}: ${issue.message}`);
  }
  const names = new Set<string>();
  const ids = new Set<string>();
  for (const key of parsed.data.keys) {
    if (names.has(key.name)) throw new KeyFileError(`Cannot read keys file "${path}": the name "${key.name}" is used twice`);
    if (ids.has(key.id)) throw new KeyFileError(`Cannot read keys file "${path}": the id "${key.id}" is used twice`);
    names.add(key.name);
    ids.add(key.id);
  }
  return parsed.data;
}

/** The file's keys, or undefined when there is no file; anything else unreadable is a KeyFileError. */
export function readKeyFile(path: string): KeyFile | undefined {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new KeyFileError(`Cannot read keys file "${path}": ${(error as Error).message}`);
  }
  if (size > MAX_FILE_BYTES) throw new KeyFileError(`Cannot read keys file "${path}": ${size} bytes is over the ${MAX_FILE_BYTES}-byte limit`);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new KeyFileError(`Cannot read keys file "${path}": ${(error as Error).message}`);
  }
  return parseKeyFile(text, path);
}

/** Replaces the file at once (readers see the old keys or the new, never half), readable by its owner only. */
export function writeKeyFile(path: string, file: KeyFile): Promise<void> {
  return writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`, 0o600);
}
