// Which loaded model an SDK call means (its `specifier`), through the one LM Studio model service that
// the REST routes use: the same models, JIT loading, TTL and Auto-Evict.
//   {type: "instanceReference", instanceReference}  that instance (llamux's references are instance ids)
//   {type: "query", query: {identifier?, path?, vision?}}
//                                                   a loaded instance with that identifier, model key or
//                                                   path; with no identifier the most recently used one
import { z } from "zod";
import type { EngineProcess } from "../../../engine/engine-process.ts";
import type { EngineOptions } from "../../../engine/types.ts";
import { ApiError, badRequest, notFound } from "../../api-error.ts";
import type { LoadedModel, ServedModel } from "../../model-service.ts";
import type { LmStudioModelService } from "../model-service.ts";
import { domainOf, type Domain } from "./model-info.ts";

const keyString = z.string().min(1).max(1024);

export const specifierSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("query"), query: z.object({ domain: z.string().optional(), identifier: keyString.optional(), path: keyString.optional(), vision: z.boolean().optional() }) }),
  z.object({ type: z.literal("instanceReference"), instanceReference: keyString }),
]);
export type Specifier = z.infer<typeof specifierSchema>;

/** Reads an RPC's parameter or a channel's creation parameter; a wrong shape is an error naming the field. */
export function parameter<T extends z.ZodType>(schema: T, value: unknown, endpoint: string): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.map(String).join(".");
  throw badRequest(`Invalid parameter of "${endpoint}"${path ? ` at "${path}"` : ""}: ${issue.message}`, path || undefined);
}

export class Instances {
  constructor(readonly models: LmStudioModelService, readonly domain: Domain) {}

  /** The loaded instances of this namespace's kind, models named on `serve` included. */
  async list(): Promise<LoadedModel[]> {
    await this.models.loadServed();
    return this.models.loaded().filter((loaded) => this.isOwn(loaded.model)).sort((a, b) => b.lastUsed - a.lastUsed);
  }

  isOwn(model: ServedModel): boolean {
    return domainOf(model) === this.domain;
  }

  /** The loaded instance the specifier means, if any. */
  async find(specifier: Specifier): Promise<LoadedModel | undefined> {
    const loaded = await this.list();
    if (specifier.type === "instanceReference") return loaded.find((l) => this.models.instanceId(l) === specifier.instanceReference);
    const { identifier, path, vision } = specifier.query;
    const named = identifier !== undefined ? this.findModel(identifier) : undefined;
    return loaded.find((l) =>
      (identifier === undefined || this.models.instanceId(l) === identifier || l.model.id === identifier || (named !== undefined && l.model.path === named.path)) &&
      (path === undefined || l.model.path === path) &&
      (vision === undefined || (l.engine.info.vision !== undefined) === vision));
  }

  async require(specifier: Specifier): Promise<LoadedModel> {
    const found = await this.find(specifier);
    if (found) return found;
    throw this.notLoaded(specifier);
  }

  /**
   * The engine for a call: the instance the specifier means, else (a query naming a model) that model
   * loaded just in time, as a REST request naming it would.
   */
  async engine(specifier: Specifier, loadOverrides?: (model: ServedModel) => Partial<EngineOptions>): Promise<{ engine: EngineProcess; loaded: LoadedModel }> {
    const found = await this.find(specifier);
    if (found) return { engine: await this.models.useInstance(found), loaded: found };
    const identifier = specifier.type === "query" ? specifier.query.identifier : undefined;
    if (identifier === undefined) throw this.notLoaded(specifier);
    const model = this.model(identifier);
    const engine = await this.models.engine(model, loadOverrides?.(model) ?? {});
    const loaded = this.models.loaded().find((l) => l.engine === engine);
    if (!loaded) throw new ApiError(503, `Model "${model.id}" was unloaded while it loaded`);
    return { engine, loaded };
  }

  /** A downloaded (or served) model of this namespace's kind, by key, store name or path. */
  model(key: string): ServedModel {
    const model = this.findModel(key);
    if (!model) throw notFound(`Cannot find a model with key "${key}". Downloaded models: ${this.models.list().filter((m) => this.isOwn(m)).map((m) => m.id).join(", ") || "none"}`, "modelKey");
    if (!this.isOwn(model)) throw badRequest(`Model "${model.id}" is ${this.domain === "llm" ? "an embedding model" : "not an embedding model"}: use the /${domainOf(model)} namespace`, "modelKey");
    return model;
  }

  private findModel(key: string): ServedModel | undefined {
    try {
      return this.models.find(key);
    } catch {
      return undefined; // not a model name at all
    }
  }

  private notLoaded(specifier: Specifier): ApiError {
    const what = specifier.type === "instanceReference"
      ? `instance "${specifier.instanceReference}" (it may have been unloaded)`
      : specifier.query.identifier !== undefined ? `"${specifier.query.identifier}"` : "any model";
    return notFound(`No loaded ${this.domain === "llm" ? "LLM" : "embedding model"} matches ${what}. Load one with llm.model("key") or "lms load".`);
  }
}
