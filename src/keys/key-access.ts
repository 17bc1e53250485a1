// Who may call a server: its plain keys (--api-key) and the named keys of its keys file, together. A
// request's credentials become a grant here; the grant opens a KeyRequest per piece of work. With neither
// kind of key the server is open, as the anchors are without keys.
import { fullGrant, type KeyGrant } from "./key-grant.ts";
import { KeyRefusal } from "./key-refusal.ts";
import { KeyRequest } from "./key-request.ts";
import type { KeyRing } from "./key-ring.ts";
import { keyOwnerFinder } from "./plain-keys.ts";
import { UsageBook } from "./usage-book.ts";

export interface KeyAccessOptions {
  plainKeys?: string[];
  ring?: KeyRing;
  /** Where named keys' usage is counted (default: in memory). */
  usage?: UsageBook;
}

export class KeyAccess {
  readonly ring: KeyRing | undefined;
  readonly usage: UsageBook;
  private readonly plainOwner: ((candidate: string) => string | undefined) | undefined;

  constructor(options: KeyAccessOptions) {
    this.ring = options.ring;
    this.usage = options.usage ?? new UsageBook();
    this.plainOwner = options.plainKeys?.length ? keyOwnerFinder(options.plainKeys) : undefined;
  }

  /** Whether requests need a key: plain keys are set, or a keys file has been read. */
  get required(): boolean {
    return this.plainOwner !== undefined || this.ring?.active === true;
  }

  /**
   * The grant of the first credential that is a key, or undefined when none is; a named key past its
   * expiry is a KeyRefusal (401), whatever else was sent.
   */
  async authenticate(candidates: string[]): Promise<KeyGrant | undefined> {
    // Every credential is compared with every plain key (no early exit), then named keys are looked up.
    const plain = candidates.map((candidate) => this.plainOwner?.(candidate));
    const owner = plain.find((found) => found !== undefined);
    if (owner !== undefined) return fullGrant(owner);
    if (!this.ring) return undefined;
    for (const candidate of candidates) {
      const checked = await this.ring.check(candidate);
      if (checked && "grant" in checked) return checked.grant;
      if (checked && "expired" in checked) {
        throw new KeyRefusal(401, `API key "${checked.expired.name}" expired at ${checked.expired.expires_at}: ask for a new key`);
      }
    }
    return undefined;
  }

  /** One piece of work under `grant`. */
  open(grant: KeyGrant): KeyRequest {
    return new KeyRequest(grant, this.usage);
  }

  /** Stops watching the keys file and writes the usage. */
  async close(): Promise<void> {
    this.ring?.close();
    await this.usage.flush();
  }
}
