// The CLI's side of a running llamux (or Ollama) server: where it is (LLAMUX_HOST, else OLLAMA_HOST,
// else 127.0.0.1:11434), whether it answers, and its /api/* calls with errors in Ollama's words.

const DEFAULT_PORT = 11434;
const PROBE_TIMEOUT_MS = 700;

/** The server's base URL from `LLAMUX_HOST` or `OLLAMA_HOST`: `host`, `host:port`, `:port`, with or without http(s)://. */
export function serverUrl(env: Record<string, string | undefined> = process.env): string {
  const raw = (env.LLAMUX_HOST ?? env.OLLAMA_HOST ?? "").trim().replace(/^["']|["']$/g, "");
  const scheme = /^(https?):\/\//i.exec(raw)?.[1]?.toLowerCase() ?? "http";
  const rest = raw.replace(/^https?:\/\//i, "").replace(/\/.*$/, "");
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(rest);
  let host = match?.[1] || "127.0.0.1";
  if (host === "0.0.0.0") host = "127.0.0.1";
  if (host === "[::]") host = "[::1]";
  const port = match?.[2] ? Number(match[2]) : raw.startsWith("http") && !match?.[2] ? (scheme === "https" ? 443 : 80) : DEFAULT_PORT;
  return `${scheme}://${host}:${port}`;
}

/** An error answer from the server: its status and the message of its `{"error": ...}` body. */
export class ServerError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = "ServerError";
  }
}

export class ServerClient {
  constructor(readonly baseUrl = serverUrl()) {}

  /** The client for the configured server when it answers `HEAD /`, else undefined. */
  static async connect(): Promise<ServerClient | undefined> {
    const client = new ServerClient();
    return (await client.answers()) ? client : undefined;
  }

  async answers(): Promise<boolean> {
    try {
      const response = await fetch(this.baseUrl, { method: "HEAD", signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
      return response.ok;
    } catch {
      return false;
    }
  }

  async get<T>(path: string): Promise<T> {
    return (await this.checked(await fetch(this.baseUrl + path))).json() as Promise<T>;
  }

  async post<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
    const response = await this.request("POST", path, body, signal);
    const text = await response.text();
    return (text ? JSON.parse(text) : {}) as T;
  }

  async request(method: string, path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
    const response = await fetch(this.baseUrl + path, {
      method, headers: { "content-type": "application/json" }, body: JSON.stringify(body), ...(signal ? { signal } : {}),
    });
    return this.checked(response);
  }

  /** Whether the server's store holds the blob (`HEAD /api/blobs/<digest>`). */
  async hasBlob(digest: string): Promise<boolean> {
    const response = await fetch(`${this.baseUrl}/api/blobs/${digest}`, { method: "HEAD" });
    if (response.status === 404) return false;
    await this.checked(response);
    return true;
  }

  /** Uploads a blob's bytes; the server checks them against `digest`. */
  async uploadBlob(digest: string, body: ReadableStream<Uint8Array>): Promise<void> {
    await this.checked(await fetch(`${this.baseUrl}/api/blobs/${digest}`, { method: "POST", body, duplex: "half" } as RequestInit));
  }

  /** POSTs and yields each NDJSON line as an object; an `{"error": ...}` line is thrown as a ServerError. */
  async *stream<T extends object>(path: string, body: unknown, signal?: AbortSignal): AsyncGenerator<T> {
    const response = await this.request("POST", path, body, signal);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let pending = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (value) pending += value;
      const lines = pending.split("\n");
      pending = done ? "" : lines.pop()!;
      for (const line of lines) {
        if (!line.trim()) continue;
        const item = JSON.parse(line) as T & { error?: string };
        if (typeof item.error === "string") throw new ServerError(500, item.error);
        yield item as T;
      }
      if (done) return;
    }
  }

  private async checked(response: Response): Promise<Response> {
    if (response.ok) return response;
    const text = await response.text();
    let message = text.trim() || response.statusText;
    try {
      const body = JSON.parse(text) as { error?: unknown };
      if (typeof body.error === "string") message = body.error;
      else if (body.error && typeof (body.error as { message?: unknown }).message === "string") message = (body.error as { message: string }).message;
    } catch {
      // plain-text answer: keep it as it is
    }
    throw new ServerError(response.status, message);
  }
}
