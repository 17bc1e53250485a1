// Remembers which secrets passed (or failed) the slow hash, by a fast keyed digest (HMAC-SHA256 under a
// random per-process key, so the table holds nothing an attacker could test guesses against): a key's first
// use pays argon2id on a worker thread, later uses one HMAC on the HTTP thread. An entry holds the hash it
// was checked against, so a key re-created in the file is checked afresh. At most two slow checks run at
// once (each takes 64 MiB), and concurrent first uses of one secret share one check.
import { createHmac, randomBytes } from "node:crypto";
import { verifySecret } from "./key-secret.ts";

/** Digests remembered per outcome before the oldest is forgotten. */
const MAX_REMEMBERED = 4096;
const MAX_CONCURRENT_CHECKS = 2;

export class VerifiedSecrets {
  private readonly digestKey = randomBytes(32);
  private readonly passed = new Map<string, string>();
  private readonly failed = new Map<string, string>();
  private readonly checking = new Map<string, Promise<boolean>>();
  private running = 0;
  private readonly queue: Array<() => void> = [];
  /** Slow checks run so far (tests read it to see the cache work). */
  slowChecks = 0;

  /** Whether `secret` is the one `hash` was made from. */
  async matches(secret: string, hash: string): Promise<boolean> {
    const digest = createHmac("sha256", this.digestKey).update(secret).digest("base64");
    if (this.passed.get(digest) === hash) return true;
    if (this.failed.get(digest) === hash) return false;
    const pending = this.checking.get(digest);
    if (pending) return (await pending) && this.passed.get(digest) === hash;
    const check = this.slowCheck(secret, hash).then((ok) => {
      remember(ok ? this.passed : this.failed, digest, hash);
      return ok;
    }).finally(() => this.checking.delete(digest));
    this.checking.set(digest, check);
    return check;
  }

  private async slowCheck(secret: string, hash: string): Promise<boolean> {
    if (this.running >= MAX_CONCURRENT_CHECKS) await new Promise<void>((resolve) => this.queue.push(resolve));
    this.running++;
    this.slowChecks++;
    try {
      return await verifySecret(secret, hash);
    } finally {
      this.running--;
      this.queue.shift()?.();
    }
  }
}

function remember(table: Map<string, string>, digest: string, hash: string): void {
  table.delete(digest);
  table.set(digest, hash);
  if (table.size > MAX_REMEMBERED) table.delete(table.keys().next().value!);
}
