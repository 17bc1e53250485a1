// Fetches an image a request names by URL without letting the request reach what the server can reach
// and the client cannot: http(s) only; every host (the first and each redirect's) is resolved and all
// its addresses must be public unless private ones are allowed; plain-http requests go to the address
// that was checked (so DNS cannot answer differently between check and connect), while https ones are
// bound to the name by certificate checks; at most `maxBytes`, all within `timeoutMs`.
import { checkHostAddresses, pinnedToAddress } from "./internal-address.ts";
import { ImageInputError } from "./image-input-error.ts";

export interface ImageFetchPolicy {
  /** Fetch from loopback, private and link-local addresses too (`--allow-private-image-urls`). Default: false. */
  allowPrivate: boolean;
  /** Default: 20 MB. */
  maxBytes: number;
  /** For the whole fetch, redirects included. Default: 10 s. */
  timeoutMs: number;
  /** Default: 5. */
  maxRedirects: number;
  /** Which resolved addresses are refused. Default: internal ones (isInternalAddress), none with allowPrivate. */
  isBlocked?: (address: string) => boolean;
}

export const defaultImageFetchPolicy: ImageFetchPolicy = { allowPrivate: false, maxBytes: 20_000_000, timeoutMs: 10_000, maxRedirects: 5 };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The host's addresses, each checked; returns the one to connect to. */
async function checkedAddress(url: URL, policy: ImageFetchPolicy): Promise<string> {
  const checked = await checkHostAddresses(url, policy, "--allow-private-image-urls");
  if (!checked.ok) throw new ImageInputError(`Cannot fetch image from "${url.origin}": ${checked.reason}`, checked.cause !== undefined ? { cause: checked.cause } : undefined);
  return checked.address;
}

async function readCapped(response: Response, url: URL, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length") ?? "NaN");
  const tooLarge = () => new ImageInputError(`Cannot fetch image from "${url.origin}": it is larger than ${maxBytes} bytes`);
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge();
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}

/** The bytes at `address` (http or https), following redirects under the policy; throws ImageInputError. */
export async function fetchImageUrl(address: string, policy: ImageFetchPolicy = defaultImageFetchPolicy): Promise<Uint8Array> {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new ImageInputError(`Cannot fetch image: "${address.slice(0, 80)}" is not a URL`);
  }
  const signal = AbortSignal.timeout(policy.timeoutMs);
  try {
    for (let redirects = 0; ; redirects++) {
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        throw new ImageInputError(`Cannot fetch image from "${url.protocol}" URL: only http and https are allowed`);
      }
      if (url.username || url.password) throw new ImageInputError(`Cannot fetch image from "${url.origin}": URLs with credentials are not allowed`);
      const target = pinnedToAddress(url, await checkedAddress(url, policy));
      const response = await fetch(target, { redirect: "manual", signal, headers: { host: url.host, accept: "image/*", "user-agent": "llamux" } });
      if (REDIRECTS.has(response.status)) {
        await response.body?.cancel();
        const location = response.headers.get("location");
        if (!location) throw new ImageInputError(`Cannot fetch image from "${url.origin}": redirect without a location`);
        if (redirects >= policy.maxRedirects) throw new ImageInputError(`Cannot fetch image from "${url.origin}": more than ${policy.maxRedirects} redirects`);
        url = new URL(location, url);
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new ImageInputError(`Cannot fetch image from "${url.origin}": HTTP ${response.status}`);
      }
      return await readCapped(response, url, policy.maxBytes);
    }
  } catch (error) {
    if (error instanceof ImageInputError) throw error;
    if (signal.aborted) throw new ImageInputError(`Cannot fetch image from "${url.origin}": no complete answer within ${policy.timeoutMs / 1000} s`, { cause: error });
    throw new ImageInputError(`Cannot fetch image from "${url.origin}": ${(error as Error).message}`, { cause: error });
  }
}
