// The ed25519 key Ollama signs registry token requests with: an unencrypted OpenSSH private key
// (`~/.ollama/id_ed25519` by default, LLAMUX_REGISTRY_KEY elsewhere), so a key already registered with
// ollama.com works for llamux too. A missing key is created in that format, as `ollama serve` does.
import { createPrivateKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

const MAGIC = "openssh-key-v1\0";
const KEY_TYPE = "ssh-ed25519";
const PEM_BEGIN = "-----BEGIN OPENSSH PRIVATE KEY-----";
const PEM_END = "-----END OPENSSH PRIVATE KEY-----";

export function defaultRegistryKeyPath(env: Record<string, string | undefined> = process.env): string {
  return env.LLAMUX_REGISTRY_KEY || join(homedir(), ".ollama", "id_ed25519");
}

export interface RegistryKey {
  /** The public key as authorized_keys writes it after the type: base64 of its SSH wire form. */
  publicKey: string;
  /** `<public key>:<base64 signature of data>`, the Authorization value Ollama sends to a token realm. */
  authorization(data: string): string;
}

/** SSH wire strings: a 32-bit big-endian length, then the bytes. */
function sshString(bytes: Uint8Array | string): Buffer {
  const body = typeof bytes === "string" ? Buffer.from(bytes) : Buffer.from(bytes);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.byteLength);
  return Buffer.concat([length, body]);
}

class WireReader {
  private offset = 0;
  constructor(private readonly bytes: Buffer, private readonly path: string) {}
  uint32(): number {
    if (this.offset + 4 > this.bytes.byteLength) throw this.truncated();
    const value = this.bytes.readUInt32BE(this.offset);
    this.offset += 4;
    return value;
  }
  string(): Buffer {
    const length = this.uint32();
    if (this.offset + length > this.bytes.byteLength) throw this.truncated();
    const value = this.bytes.subarray(this.offset, this.offset + length);
    this.offset += length;
    return value;
  }
  private truncated(): Error {
    return new Error(`Cannot read registry key "${this.path}": the key data is truncated`);
  }
}

function publicBlob(publicKey: Uint8Array): Buffer {
  return Buffer.concat([sshString(KEY_TYPE), sshString(publicKey)]);
}

function keyFromSeed(seed: Uint8Array, publicKey: Uint8Array): KeyObject {
  const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url");
  return createPrivateKey({ key: { kty: "OKP", crv: "Ed25519", d: b64url(seed), x: b64url(publicKey) }, format: "jwk" });
}

/** Reads the seed and public key of an unencrypted OpenSSH ed25519 private key. */
export function parseOpenSshKey(text: string, path: string): { seed: Uint8Array; publicKey: Uint8Array } {
  const fail = (why: string): never => {
    throw new Error(`Cannot read registry key "${path}": ${why}`);
  };
  const begin = text.indexOf(PEM_BEGIN);
  const end = text.indexOf(PEM_END);
  if (begin < 0 || end < begin) fail("it is not an OpenSSH private key");
  const bytes = Buffer.from(text.slice(begin + PEM_BEGIN.length, end).replace(/\s+/g, ""), "base64");
  if (bytes.subarray(0, MAGIC.length).toString("latin1") !== MAGIC) fail("it is not an OpenSSH private key");
  const reader = new WireReader(bytes.subarray(MAGIC.length), path);
  const cipher = reader.string().toString();
  reader.string(); // kdf name
  reader.string(); // kdf options
  if (cipher !== "none") fail("it is encrypted with a passphrase");
  if (reader.uint32() !== 1) fail("it holds more than one key");
  reader.string(); // public key blob
  const secret = new WireReader(reader.string(), path);
  if (secret.uint32() !== secret.uint32()) fail("its check numbers differ (a damaged file)");
  if (secret.string().toString() !== KEY_TYPE) fail(`it is not an ${KEY_TYPE} key`);
  const publicKey = secret.string();
  const privateKey = secret.string();
  if (publicKey.byteLength !== 32 || privateKey.byteLength !== 64) fail("its ed25519 key has the wrong length");
  return { seed: new Uint8Array(privateKey.subarray(0, 32)), publicKey: new Uint8Array(publicKey) };
}

/** The key in OpenSSH's private key format (unencrypted), as ssh-keygen writes it. */
export function formatOpenSshKey(seed: Uint8Array, publicKey: Uint8Array, comment = ""): string {
  const check = randomBytes(4);
  let secret = Buffer.concat([check, check, sshString(KEY_TYPE), sshString(publicKey), sshString(Buffer.concat([seed, publicKey])), sshString(comment)]);
  const padding = Buffer.from(Array.from({ length: (8 - (secret.byteLength % 8)) % 8 }, (_, i) => i + 1));
  secret = Buffer.concat([secret, padding]);
  const count = Buffer.alloc(4);
  count.writeUInt32BE(1);
  const body = Buffer.concat([Buffer.from(MAGIC, "latin1"), sshString("none"), sshString("none"), sshString(""), count, sshString(publicBlob(publicKey)), sshString(secret)]);
  const lines = body.toString("base64").match(/.{1,70}/g)!;
  return `${PEM_BEGIN}\n${lines.join("\n")}\n${PEM_END}\n`;
}

function createKeyFile(path: string): void {
  const { privateKey } = generateKeyPairSync("ed25519");
  const jwk = privateKey.export({ format: "jwk" }) as { d: string; x: string };
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // Readable by its owner only from the start; "wx": a key another process wrote meanwhile is kept.
  try {
    writeFileSync(path, formatOpenSshKey(Buffer.from(jwk.d, "base64url"), Buffer.from(jwk.x, "base64url")), { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw new Error(`Cannot create registry key "${path}": ${(error as Error).message}`, { cause: error });
  }
}

/** Loads the key at `path`, creating it first when `create` is set and no file is there. */
export function loadRegistryKey(path: string, options: { create: boolean }): RegistryKey | undefined {
  if (!existsSync(path)) {
    if (!options.create) return undefined;
    createKeyFile(path);
  }
  const { seed, publicKey } = parseOpenSshKey(readFileSync(path, "utf8"), path);
  const key = keyFromSeed(seed, publicKey);
  const encodedPublic = publicBlob(publicKey).toString("base64");
  return {
    publicKey: encodedPublic,
    authorization: (data) => `${encodedPublic}:${sign(null, Buffer.from(data), key).toString("base64")}`,
  };
}
