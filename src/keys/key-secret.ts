// A named key's secret: "llx-" + its public id (8 hex digits, stored in the clear to find the entry) + "-" +
// 32 random bytes in base64url. Only an argon2id hash of the whole secret is stored (Bun.password, which
// hashes and verifies on a worker thread); the secret is printed once, when the key is created.
import { randomBytes } from "node:crypto";

const SECRET_PATTERN = /^llx-([0-9a-f]{8})-[A-Za-z0-9_-]{43}$/;

export interface NewSecret {
  id: string;
  secret: string;
}

export function newKeySecret(): NewSecret {
  const id = randomBytes(4).toString("hex");
  return { id, secret: `llx-${id}-${randomBytes(32).toString("base64url")}` };
}

/** The id a presented credential names, or undefined when it does not look like a named key's secret. */
export function keyIdOf(candidate: string): string | undefined {
  return SECRET_PATTERN.exec(candidate)?.[1];
}

export function hashSecret(secret: string): Promise<string> {
  return Bun.password.hash(secret, { algorithm: "argon2id" });
}

/** False for a wrong secret and for a hash that cannot be read (a hand-edited file). */
export async function verifySecret(secret: string, hash: string): Promise<boolean> {
  try {
    return await Bun.password.verify(secret, hash);
  } catch {
    return false;
  }
}
