// Calls to the llamux server from the page. The API key, when the server wants one, is asked for once
// and kept in localStorage; a 401 tells the app to ask again.

const KEY_STORAGE = "llamux.apiKey";

export class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = "HttpError";
  }
}

let unauthorizedListener: (() => void) | undefined;

/** Called whenever the server refuses the page's key (or the lack of one). */
export function onUnauthorized(listener: () => void): void {
  unauthorizedListener = listener;
}

export function storedApiKey(): string {
  return localStorage.getItem(KEY_STORAGE) ?? "";
}

export function storeApiKey(key: string): void {
  if (key) localStorage.setItem(KEY_STORAGE, key);
  else localStorage.removeItem(KEY_STORAGE);
}

export function authHeaders(): Record<string, string> {
  const key = storedApiKey();
  return key ? { Authorization: `Bearer ${key}` } : {};
}

async function errorMessage(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  try {
    const body = JSON.parse(text) as { error?: string | { message?: string }; message?: string };
    const message = typeof body.error === "string" ? body.error : body.error?.message ?? body.message;
    if (message) return message;
  } catch {
    // not JSON: the text itself
  }
  return text || `${response.status} ${response.statusText}`;
}

/** fetch with the key; throws HttpError for any status but 2xx. */
export async function request(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = { ...authHeaders(), ...(init.headers as Record<string, string> | undefined) };
  const response = await fetch(path, { ...init, headers });
  if (response.status === 401) unauthorizedListener?.();
  if (!response.ok) throw new HttpError(response.status, await errorMessage(response));
  return response;
}

export async function getJson<T>(path: string): Promise<T> {
  return (await (await request(path)).json()) as T;
}

export async function postJson<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
  const response = await request(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
  return (await response.json()) as T;
}
