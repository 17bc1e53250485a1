// Request validation with zod: a known field with a wrong type or range is a 400 naming the field;
// unknown fields pass through (real clients send them) and are logged once per request.
import type { Context } from "hono";
import { z } from "zod";
import { badRequest } from "./api-error.ts";
import { logger } from "../log.ts";

const log = logger("http");

/** Reads the JSON body; malformed JSON or a non-object body is a 400. */
export async function readJsonBody(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (!text.trim()) throw badRequest("Request body is empty: expected a JSON object");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badRequest(`Cannot parse request body as JSON: ${(error as Error).message}`);
  }
}

function fieldPath(path: PropertyKey[]): string {
  return path.map((p) => (typeof p === "number" ? `[${p}]` : String(p))).join(".").replace(/\.\[/g, "[");
}

export function validate<T extends z.ZodObject>(schema: T, body: unknown): z.infer<T> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest("Request body must be a JSON object");
  const result = schema.safeParse(body);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const field = fieldPath(issue.path);
    throw badRequest(field ? `Invalid value for "${field}": ${issue.message}` : issue.message, field || undefined);
  }
  const known = new Set(Object.keys(schema.shape));
  const unknown = Object.keys(body).filter((key) => !known.has(key));
  if (unknown.length > 0) log.warn(`ignored unknown request fields: ${unknown.join(", ")}`);
  return result.data;
}
