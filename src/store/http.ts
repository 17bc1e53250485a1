// fetch for pulls, where a registry or hub is a peer that can lie: follows redirects itself, so
// credentials go to the host they are meant for only (a hub's download redirects to a CDN on another
// host), and each redirect passes the guard image URLs pass (a loopback, private or link-local address
// only where the registry itself is); connecting, each answer's headers and every read of a body have a
// time limit; a body can be capped; and an error status carries a short, sanitised excerpt of its body.
import { pullTimeoutMs } from "../config.ts";
import { checkHostAddresses, hostAddresses, isInternalAddress, pinnedToAddress } from "../vision/internal-address.ts";

/** How much of an error answer is read, and how much of it an error message quotes. */
const ERROR_BODY_BYTES = 4096;
const EXCERPT_CHARS = 200;

export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    readonly url: string,
    /** a short excerpt of the answer (bodyExcerpt) */
    readonly body: string,
  ) {
    super(`${url} answered ${status}${body ? `: ${body}` : ""}`);
    this.name = "HttpStatusError";
  }
}

/** A body past the bound its reader set: never worth retrying, since the peer would send it again. */
export class BodyTooLargeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BodyTooLargeError";
  }
}

/** A redirect to an address a pull may not reach: the same answer would come again, so it is not retried. */
export class RedirectRefusedError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RedirectRefusedError";
  }
}

/** No connection, no headers or no bytes within the time limit. */
export class PullTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PullTimeoutError";
  }
}

/** A peer's text as an error may quote it: control characters and runs of spaces made one space, at most 200 characters. */
export function bodyExcerpt(text: string): string {
  const flat = text.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\s]+/gu, " ").trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS - 1)}…` : flat;
}

export interface FetchedResponse {
  response: Response;
  /** the headers of the first response, before redirects (the hub puts x-linked-etag/x-linked-size there) */
  firstHeaders: Headers;
}

export interface PullFetchInit {
  method?: "GET" | "HEAD";
  headers?: Record<string, string>;
  /** sent only while the request stays on the original host */
  credentials?: Record<string, string>;
  signal?: AbortSignal;
  /** statuses of 400 and above that are answers rather than errors */
  allow?: number[];
  /** most bytes the body may have: reading more fails with BodyTooLargeError (default: no bound) */
  maxBytes?: number;
  /** words for the body in the BodyTooLargeError ("the manifest") */
  bodyLabel?: string;
  /** to connect and get each answer's headers, and for each read of the body (default: LLAMUX_PULL_TIMEOUT, 30 s) */
  timeoutMs?: number;
}

const MAX_REDIRECTS = 10;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * GET (or HEAD) `url`. Statuses of 400 and above throw HttpStatusError, unless listed in `allow`. The body
 * of the response returned keeps the time limit and the bound: read it or cancel it.
 */
export async function fetchFollowingRedirects(url: string, init: PullFetchInit = {}): Promise<FetchedResponse> {
  const timeoutMs = init.timeoutMs ?? pullTimeoutMs();
  const seconds = `${timeoutMs / 1000} s`;
  const origin = new URL(url);
  const timer = new AbortController();
  let timedOut: PullTimeoutError | undefined;
  const abort = (error: PullTimeoutError) => {
    timedOut = error;
    timer.abort(error);
  };
  const signal = init.signal ? AbortSignal.any([init.signal, timer.signal]) : timer.signal;
  let ownAddresses: string[] | undefined;
  let current = origin;
  let firstHeaders: Headers | undefined;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const sameHost = current.host === origin.host;
    const headers = new Headers({ ...init.headers, ...(sameHost ? init.credentials : {}) });
    let target = current;
    if (hop > 0) {
      ownAddresses ??= await hostAddresses(origin).catch(() => []);
      target = pinnedToAddress(current, await checkRedirect(current, ownAddresses));
      headers.set("host", current.host);
    }
    const waiting = setTimeout(() => abort(new PullTimeoutError(`${current.origin} did not answer within ${seconds}`)), timeoutMs);
    let response: Response;
    try {
      response = await fetch(target, { method: init.method ?? "GET", headers, redirect: "manual", signal });
    } catch (error) {
      throw timedOut ?? error;
    } finally {
      clearTimeout(waiting);
    }
    firstHeaders ??= response.headers;
    const location = response.headers.get("location");
    if (REDIRECTS.has(response.status) && location) {
      await response.body?.cancel();
      current = new URL(location, current);
      if (current.protocol !== "http:" && current.protocol !== "https:") throw new RedirectRefusedError(`Cannot follow a redirect to a "${current.protocol}" URL`);
      continue;
    }
    const guarded = { timeoutMs, abort, origin: current.origin, ...(init.maxBytes !== undefined ? { maxBytes: init.maxBytes } : {}), label: init.bodyLabel ?? "the answer" };
    if (response.status >= 400 && !init.allow?.includes(response.status)) {
      const body = init.method === "HEAD" ? "" : await readExcerpt(withGuardedBody(response, { ...guarded, maxBytes: undefined }));
      throw new HttpStatusError(response.status, url, body);
    }
    return { response: withGuardedBody(response, guarded), firstHeaders };
  }
  throw new Error(`${url} redirected more than ${MAX_REDIRECTS} times`);
}

/**
 * The address to connect to for a redirect's host: refused when any of its addresses is loopback,
 * private or link-local, unless the registry itself (the first URL's host) has that address.
 */
async function checkRedirect(url: URL, ownAddresses: string[]): Promise<string> {
  const checked = await checkHostAddresses(url, { allowPrivate: false, isBlocked: (address) => isInternalAddress(address) && !ownAddresses.includes(address) });
  if (!checked.ok) throw new RedirectRefusedError(`Cannot follow a redirect to "${url.origin}": ${checked.reason}`, checked.cause !== undefined ? { cause: checked.cause } : undefined);
  return checked.address;
}

interface BodyGuard {
  timeoutMs: number;
  abort: (error: PullTimeoutError) => void;
  origin: string;
  maxBytes?: number | undefined;
  label: string;
}

/** The response with a body that fails past `maxBytes` and aborts the request when a read waits longer than the time limit. */
function withGuardedBody(response: Response, guard: BodyGuard): Response {
  if (!response.body) return response;
  const tooLarge = () => new BodyTooLargeError(`${guard.label} from ${guard.origin} is larger than ${guard.maxBytes} bytes`);
  const declared = Number(response.headers.get("content-length") ?? NaN);
  if (guard.maxBytes !== undefined && declared > guard.maxBytes) {
    void response.body.cancel();
    throw tooLarge();
  }
  const reader = response.body.getReader();
  let size = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let expired: PullTimeoutError | undefined;
      const waiting = setTimeout(() => {
        expired = new PullTimeoutError(`${guard.origin} sent nothing for ${guard.timeoutMs / 1000} s`);
        guard.abort(expired);
      }, guard.timeoutMs);
      try {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        size += value.byteLength;
        if (guard.maxBytes !== undefined && size > guard.maxBytes) {
          void reader.cancel();
          throw tooLarge();
        }
        controller.enqueue(value);
      } catch (error) {
        throw expired ?? error;
      } finally {
        clearTimeout(waiting);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** The first few KiB of an error answer, as an excerpt; the rest is not read. */
async function readExcerpt(response: Response): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  try {
    for await (const chunk of response.body ?? []) {
      text += decoder.decode(chunk, { stream: true });
      if (text.length >= ERROR_BODY_BYTES) break;
    }
  } catch {
    // what arrived before the failure is excerpt enough
  }
  return bodyExcerpt(text.slice(0, ERROR_BODY_BYTES));
}
