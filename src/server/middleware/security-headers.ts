// Headers that keep a browser from misusing answers: no site may frame a page of this server
// (clickjacking the web UI), no answer is sniffed into another content type, and an answer that sets
// no Content-Security-Policy of its own (every API answer; the web UI page sets one that fits it) may
// load nothing at all.
import type { MiddlewareHandler } from "hono";

/** What API answers get: JSON and text need nothing from anywhere. */
export const API_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'";

/**
 * The web UI's page: its script and styles come from this server (the stylesheet is inline, and
 * components set style attributes), it talks only to this server, and shows attached images, which
 * may be data: URIs or http(s) URLs the user typed, and plays speech from data: URLs.
 */
export const WEB_UI_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob: http: https:",
  // a speech model's answer plays from a data: URL of its WAV
  "media-src 'self' data: blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

export function securityHeaders(): MiddlewareHandler {
  return async function securityHeaders(c, next) {
    await next();
    c.header("X-Frame-Options", "DENY");
    c.header("X-Content-Type-Options", "nosniff");
    if (!c.res.headers.has("Content-Security-Policy")) c.header("Content-Security-Policy", API_CONTENT_SECURITY_POLICY);
  };
}
