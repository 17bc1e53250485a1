// fetch for pulls: follows redirects itself, so credentials go to the host they are meant for only
// (a hub's download redirects to a CDN on another host), and turns error statuses into HttpStatusError.

export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    readonly url: string,
    readonly body: string,
  ) {
    super(`${url} answered ${status}${body ? `: ${body.slice(0, 300)}` : ""}`);
    this.name = "HttpStatusError";
  }
}

export interface FetchedResponse {
  response: Response;
  /** the headers of the first response, before redirects (the hub puts x-linked-etag/x-linked-size there) */
  firstHeaders: Headers;
}

const MAX_REDIRECTS = 10;

/**
 * GET (or HEAD) `url`. `credentials` headers are sent only while the request stays on the original host.
 * Statuses of 400 and above throw HttpStatusError, unless listed in `allow`.
 */
export async function fetchFollowingRedirects(
  url: string,
  init: { method?: "GET" | "HEAD"; headers?: Record<string, string>; credentials?: Record<string, string>; signal?: AbortSignal; allow?: number[] } = {},
): Promise<FetchedResponse> {
  const origin = new URL(url).host;
  let current = url;
  let firstHeaders: Headers | undefined;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const sameHost = new URL(current).host === origin;
    const response = await fetch(current, {
      method: init.method ?? "GET",
      headers: { ...init.headers, ...(sameHost ? init.credentials : {}) },
      redirect: "manual",
      ...(init.signal ? { signal: init.signal } : {}),
    });
    firstHeaders ??= response.headers;
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      current = new URL(location, current).toString();
      continue;
    }
    if (response.status >= 400 && !init.allow?.includes(response.status)) {
      const body = init.method === "HEAD" ? "" : await response.text().catch(() => "");
      throw new HttpStatusError(response.status, url, body.trim());
    }
    return { response, firstHeaders };
  }
  throw new Error(`${url} redirected more than ${MAX_REDIRECTS} times`);
}
