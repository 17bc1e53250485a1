// The fetch that MCP sessions to URLs a request names go through, under the same guard as image URLs
// (vision/image-fetch.ts): http(s) only, no credentials in the URL, every host (the first and each
// redirect's) resolved and all its addresses public unless private ones are allowed, plain-http requests
// sent to the address that was checked, and no answer larger than a bound. Servers of mcp.json get the
// bound alone (cappedFetch): the operator chose their addresses.
import { checkHostAddresses, pinnedToAddress } from "../vision/internal-address.ts";
import { McpMessageTooLargeError } from "./message-too-large.ts";

export type HttpFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface BodyBound {
  /** Largest body one response may have (an SSE stream counts whole). */
  maxBodyBytes: number;
  /** Told when a body goes over the bound (its reader gets the same error). */
  onTooLarge?: (error: McpMessageTooLargeError) => void;
}

export interface McpUrlPolicy extends BodyBound {
  /** Reach loopback, private and link-local addresses too (`--allow-private-mcp-urls`). */
  allowPrivate: boolean;
  maxRedirects: number;
  /** Which resolved addresses are refused. Default: internal ones (isInternalAddress), none with allowPrivate. */
  isBlocked?: (address: string) => boolean;
}

/** A URL a request named that may not be reached; the routes answer it with a 400. */
export class McpUrlError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "McpUrlError";
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Checks the URL's form and its host's addresses; returns the address to connect to. */
export async function checkMcpUrl(url: URL, policy: Pick<McpUrlPolicy, "allowPrivate" | "isBlocked">): Promise<string> {
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new McpUrlError(`Cannot connect to MCP server "${url.protocol}" URL: only http and https are allowed`);
  if (url.username || url.password) throw new McpUrlError(`Cannot connect to MCP server at "${url.origin}": URLs with credentials are not allowed (send them in headers)`);
  const checked = await checkHostAddresses(url, policy, "--allow-private-mcp-urls");
  if (!checked.ok) throw new McpUrlError(`Cannot connect to MCP server at "${url.origin}": ${checked.reason}`, checked.cause !== undefined ? { cause: checked.cause } : undefined);
  return checked.address;
}

/** The response with its body cut off (as an error) past the bound. */
function capped(response: Response, bound: BodyBound, origin: string): Response {
  if (!response.body) return response;
  let size = 0;
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      size += chunk.byteLength;
      if (size <= bound.maxBodyBytes) return controller.enqueue(chunk);
      const error = new McpMessageTooLargeError(`MCP server at "${origin}"`, bound.maxBodyBytes);
      controller.error(error);
      bound.onTooLarge?.(error);
    },
  });
  return new Response(response.body.pipeThrough(counter), { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** A fetch whose answers are cut off past the bound, for servers of mcp.json. */
export function cappedFetch(bound: BodyBound): HttpFetch {
  return async (input, init) => {
    const url = new URL(typeof input === "string" ? input : input.href);
    return capped(await fetch(url, init), bound, url.origin);
  };
}

/** A fetch for the MCP SDK's HTTP transports that checks every hop under `policy`. */
export function guardedFetch(policy: McpUrlPolicy): HttpFetch {
  return async (input, init = {}) => {
    let url = new URL(typeof input === "string" ? input : input.href);
    const follow = init.redirect === undefined || init.redirect === "follow";
    for (let redirects = 0; ; redirects++) {
      const address = await checkMcpUrl(url, policy);
      const headers = new Headers(init.headers);
      headers.set("host", url.host);
      const response = await fetch(pinnedToAddress(url, address), { ...init, headers, redirect: "manual" });
      if (!follow || !REDIRECTS.has(response.status)) return capped(response, policy, url.origin);
      await response.body?.cancel();
      const location = response.headers.get("location");
      if (!location) throw new McpUrlError(`Cannot connect to MCP server at "${url.origin}": redirect without a location`);
      if (redirects >= policy.maxRedirects) throw new McpUrlError(`Cannot connect to MCP server at "${url.origin}": more than ${policy.maxRedirects} redirects`);
      url = new URL(location, url);
    }
  };
}
