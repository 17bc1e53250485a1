// Plain keys (`--api-key`, LLAMUX_API_KEY): compared in constant time, each named by a digest prefix that
// is stable across restarts and key order (the owner of what its requests store). The simple form of a
// key: every scope, no limits.
import { createHash, timingSafeEqual } from "node:crypto";

const sha256 = (text: string) => createHash("sha256").update(text).digest();

function checkKey(key: string): void {
  if (key.length === 0) throw new RangeError("Cannot use an empty API key");
  // HTTP trims header values, so such a key could never be sent.
  if (key.trim() !== key || /[\x00-\x1f\x7f]/.test(key)) {
    throw new RangeError("Cannot use an API key with leading or trailing spaces or control characters");
  }
}

/**
 * A constant-time lookup of a presented credential among the keys: the owner name of the key it
 * matches (a digest prefix, stable across restarts and key order), or undefined.
 */
export function keyOwnerFinder(keys: string[]): (candidate: string) => string | undefined {
  if (keys.length === 0) throw new RangeError("Cannot require an API key: no keys given");
  keys.forEach(checkKey);
  // Digests have equal length whatever the key's length, which timingSafeEqual needs.
  const keyDigests = keys.map(sha256);
  const owners = keyDigests.map((digest) => `key-${digest.subarray(0, 8).toString("hex")}`);
  return (candidate: string): string | undefined => {
    const digest = sha256(candidate);
    let match: string | undefined;
    // No early exit: the time taken does not tell which key (or whether any) matched.
    keyDigests.forEach((keyDigest, index) => {
      if (timingSafeEqual(keyDigest, digest)) match ??= owners[index];
    });
    return match;
  };
}
