// The named keys a server accepts, from the keys file: read at start (a file that cannot be read stops
// the server with the reason), read again within a second of any change, without a restart. A change
// that cannot be read (a half-written or hand-broken file, a file that went away) is logged and the
// last good set stays. Once a server has read a keys file it keeps requiring keys: emptying or removing
// the file refuses every named key, it never opens the server.
import { statSync } from "node:fs";
import { logger } from "../log.ts";
import { grantOf, type KeyGrant } from "./key-grant.ts";
import { type KeyEntry, KeyFileError, readKeyFile } from "./key-file.ts";
import { keyIdOf } from "./key-secret.ts";
import { VerifiedSecrets } from "./verified-secrets.ts";

const log = logger("keys");

/** How often the file's modification time, size and inode are compared with the last read's. */
export const KEY_FILE_POLL_MS = 1000;

export type KeyCheck = { grant: KeyGrant } | { expired: KeyEntry } | undefined;

function fileStamp(path: string): string {
  try {
    const stat = statSync(path, { bigint: true });
    return `${stat.mtimeNs}:${stat.size}:${stat.ino}`;
  } catch {
    return "missing";
  }
}

export class KeyRing {
  private byId = new Map<string, KeyEntry>();
  private loaded = false;
  private stamp = "missing";
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly now: () => number;
  readonly secrets = new VerifiedSecrets();

  /**
   * Reads `path` now: a file that cannot be read throws a KeyFileError; a missing one is an error only
   * when `required` (the path was named with --keys-file), otherwise the ring waits for it to appear.
   */
  constructor(readonly path: string, options: { required?: boolean; now?: () => number } = {}) {
    this.now = options.now ?? Date.now;
    this.stamp = fileStamp(path);
    const file = readKeyFile(path);
    if (!file && options.required) {
      throw new KeyFileError(`Cannot read keys file "${path}": no such file (create a key with: llamux keys create NAME --keys-file ${path})`);
    }
    if (file) this.replace(file.keys);
  }

  /** Whether a keys file has been read: from then on, requests need a key. */
  get active(): boolean {
    return this.loaded;
  }

  get size(): number {
    return this.byId.size;
  }

  entries(): KeyEntry[] {
    return [...this.byId.values()];
  }

  entryNamed(name: string): KeyEntry | undefined {
    return this.entries().find((entry) => entry.name === name);
  }

  /** The grant of the key `candidate` is the secret of; `expired` for a key past its date; undefined otherwise. */
  async check(candidate: string): Promise<KeyCheck> {
    const id = keyIdOf(candidate);
    const entry = id === undefined ? undefined : this.byId.get(id);
    if (!entry || !await this.secrets.matches(candidate, entry.hash)) return undefined;
    // The file may have changed while the hash was checked: the entry must still be the one checked.
    if (this.byId.get(id!) !== entry) return this.check(candidate);
    const grant = grantOf(entry);
    if (grant.expiresAt !== undefined && grant.expiresAt <= this.now()) return { expired: entry };
    return { grant };
  }

  /** Reads the file again when it changed; what cannot be read is logged and the last good set kept. */
  reload(): void {
    const stamp = fileStamp(this.path);
    if (stamp === this.stamp) return;
    this.stamp = stamp;
    try {
      const file = readKeyFile(this.path);
      if (!file) {
        if (this.loaded) log.warn(`keys file "${this.path}" is gone: keeping the ${this.byId.size} keys last read (revoke keys with llamux keys revoke)`);
        return;
      }
      this.replace(file.keys);
      log.info(`keys file "${this.path}" reloaded: ${file.keys.length} keys`);
    } catch (error) {
      log.error(`${(error as Error).message}: keeping the ${this.byId.size} keys last read`);
    }
  }

  /** Polls the file for changes until close(). */
  watch(intervalMs = KEY_FILE_POLL_MS): this {
    this.timer ??= setInterval(() => this.reload(), intervalMs);
    this.timer.unref?.();
    return this;
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private replace(keys: KeyEntry[]): void {
    this.byId = new Map(keys.map((entry) => [entry.id, entry]));
    this.loaded = true;
  }
}
