// Requests to one registry the way Ollama makes them for a push: with the Bearer token got so far, and on
// a 401 once more with a fresh token for the challenge (registry-token.ts). The registry key is read (or
// created) only when a realm asks for a token. Redirects are not followed: the caller decides.
import { HttpStatusError, bodyExcerpt } from "../http.ts";
import type { RegistryKey } from "./registry-key.ts";
import { parseChallenge, registryToken } from "./registry-token.ts";

export interface SessionRequest {
  headers?: Record<string, string>;
  /** Made again for each attempt, since a stream can be sent once. */
  body?: () => RequestInit["body"] | undefined;
}

export class RegistrySession {
  private token: string | undefined;

  constructor(private readonly key: () => RegistryKey | undefined, private readonly signal?: AbortSignal) {}

  /** The answer to `method url`, after one token round when the registry asked for one. */
  async send(method: string, url: string, request: SessionRequest = {}): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const response = await fetch(url, {
        method,
        headers: { ...request.headers, ...(this.token ? { Authorization: `Bearer ${this.token}` } : {}) },
        body: request.body?.() ?? null,
        redirect: "manual",
        ...(this.signal ? { signal: this.signal } : {}),
      });
      if (response.status !== 401 || attempt > 0) return response;
      const challenge = parseChallenge(response.headers.get("www-authenticate") ?? "");
      const body = bodyExcerpt(await response.text());
      if (!challenge) throw new HttpStatusError(401, url, body);
      this.token = await registryToken(challenge, new URL(url).host, this.key(), this.signal);
    }
  }

  /** As send, but a status of 400 or more throws, in Ollama's words ("<status>: <body>"). */
  async expect(method: string, url: string, request: SessionRequest = {}): Promise<Response> {
    const response = await this.send(method, url, request);
    if (response.status < 400) return response;
    const body = method === "HEAD" ? "" : bodyExcerpt(await response.text().catch(() => ""));
    if (response.status === 401) throw new RegistryError(401, "unauthorized: access denied", body);
    if (response.status === 404) throw new RegistryError(404, "file does not exist", body);
    throw new RegistryError(response.status, `${response.status}: ${body}`, body);
  }
}

export class RegistryError extends Error {
  constructor(readonly status: number, message: string, readonly body: string) {
    super(message);
    this.name = "RegistryError";
  }
}

/** Where an upload goes next: Docker-Upload-Location, else Location, relative to the request's URL. */
export function uploadLocation(response: Response, requestUrl: string): string | undefined {
  const location = response.headers.get("docker-upload-location") ?? response.headers.get("location");
  return location ? new URL(location, requestUrl).toString() : undefined;
}
