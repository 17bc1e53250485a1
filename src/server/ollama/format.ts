// Ollama's `format`: "json" for any JSON object, a JSON schema object, or empty for free text.
import type { OutputConstraint } from "../../chat/structured/constraint.ts";
import { badRequest } from "../api-error.ts";

export function formatConstraint(format: string | Record<string, unknown> | null | undefined): OutputConstraint | undefined {
  if (format === undefined || format === null || format === "") return undefined;
  if (typeof format === "object") return { type: "json_schema", schema: format };
  if (format === "json") return { type: "json_object" };
  throw badRequest(`invalid format: ${JSON.stringify(format)} (use "json" or a JSON schema)`, "format");
}
