// POST /api/show: everything about a model without loading it: Modelfile text, parameters, template,
// system prompt, license, details, the GGUF keys (model_info) and capabilities.
import type { Context } from "hono";
import { z } from "zod";
import { ggufString } from "../../store/gguf.ts";
import { badRequest } from "../api-error.ts";
import type { ServerDeps } from "../deps.ts";
import { readJsonBody, validate } from "../validation.ts";
import { capabilitiesOf, fullHeader, modelfileText, modelInfo, parametersText, storedDetails } from "./model-description.ts";
import { findModel } from "./model-request.ts";

const showSchema = z.object({
  model: z.string().optional(),
  name: z.string().optional().describe("deprecated: model"),
  verbose: z.boolean().nullable().optional().describe("arrays of model_info in full"),
  system: z.string().nullable().optional(),
  options: z.record(z.string(), z.unknown()).nullable().optional(),
});

export function show(deps: ServerDeps) {
  return async function showHandler(c: Context) {
    const body = validate(showSchema, await readJsonBody(c));
    const name = body.model || body.name;
    if (!name) throw badRequest("model is required", "model");
    const model = findModel(deps, name, "quoted");
    const stored = model.stored;
    // the Go TEMPLATE when the model has one, else the GGUF's own chat template
    const template = stored?.template ?? ggufString(fullHeader(model.path), "tokenizer.chat_template");
    const parameters = stored?.parameters ?? {};
    return c.json({
      ...(stored?.license !== undefined ? { license: stored.license } : {}),
      modelfile: modelfileText(model, template),
      ...(Object.keys(parameters).length ? { parameters: parametersText(parameters) } : {}),
      ...(template !== undefined ? { template } : {}),
      ...(stored?.system !== undefined ? { system: stored.system } : {}),
      details: storedDetails(model),
      ...(stored?.messages.length ? { messages: stored.messages } : {}),
      model_info: modelInfo(model, body.verbose === true),
      ...(model.projectorPath ? { projector_info: modelInfo({ ...model, path: model.projectorPath }, body.verbose === true) } : {}),
      capabilities: capabilitiesOf(model),
      modified_at: new Date(model.created * 1000).toISOString(),
    });
  };
}
