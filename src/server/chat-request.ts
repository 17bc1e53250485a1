// What every chat-shaped route needs around the orchestrator: the served model as a handle that loads
// its engine, the model's own parameters (Modelfile PARAMETER lines) as an option layer, and the run
// options that report to the server's observer. Routes build a ChatSpec and call runChat.
import type { EngineOptions } from "../engine/types.ts";
import type { ModelHandle, RunOptions } from "../generation/chat-spec.ts";
import { readOllamaOptions } from "../options/ollama-names.ts";
import type { OptionValues } from "../options/values.ts";
import { badRequest } from "./api-error.ts";
import type { ServerDeps } from "./deps.ts";
import type { KeepAliveRequest, ServedModel } from "./model-service.ts";
import { observeChoices } from "./observe.ts";
import { KeyRequest } from "../keys/key-request.ts";

export interface ServedModelLoad {
  /** Load options the request sets beyond its parameters (a draft model). */
  extra?: Partial<EngineOptions>;
  keepAlive?: KeepAliveRequest | undefined;
}

/**
 * The served model's engine, loaded with a request's load options (and what else the request asks); a
 * request that does not fit its context grows it where the server allows (ModelService.growContext).
 */
export function servedModel(deps: ServerDeps, model: ServedModel, load: ServedModelLoad = {}): ModelHandle {
  return {
    engine: (options) => deps.models.engine(model, { ...options, ...load.extra }, load.keepAlive),
    grow: (neededTokens) => deps.models.growContext(model, neededTokens),
    ceiling: () => deps.models.contextCeiling(model),
    ...(model.adapter ? { adapter: model.adapter.name } : {}),
  };
}

/** A chat route's refusal of an embedding model, before anything loads. */
export function refuseEmbeddingModel(deps: ServerDeps, model: ServedModel, what = "chat"): void {
  if (deps.models.embeds(model)) throw badRequest(`Model "${model.id}" is an embedding model and does not support ${what}`, "model");
}

/** A store model's Modelfile parameters: the option layer under the request's own. */
export function modelOptions(model: ServedModel): OptionValues {
  return readOllamaOptions(model.stored?.parameters, "parameters");
}

/** A request's stop strings as an option layer: set only when it names some, so the model's stay otherwise. */
export function stopOption(stop: string[] | undefined): OptionValues {
  return stop?.length ? { stop } : {};
}

/**
 * The orchestrator's run options of a request: the server's tool-call parser, its abort signal, its metrics,
 * and on a server with keys the key's scheduling facts (owner, weight, sequence cap) and its usage, which
 * counts each sequence's tokens as it ends.
 */
export function serverRun(deps: ServerDeps, model: ServedModel, signal: AbortSignal, arrived: number): RunOptions {
  const observe = observeChoices(deps, model.id, arrived);
  // Taken now, inside the request: a sequence's end is reported from the engine's events, outside it.
  const work = KeyRequest.current();
  return {
    ...(deps.toolCallParser ? { toolCallParser: deps.toolCallParser } : {}),
    ...(work ? { schedule: work.schedule() } : {}),
    signal,
    onDone: work
      ? (done) => {
        observe(done);
        const { promptTokens, completionTokens, cachedPromptTokens } = done.usage;
        work.addSequence({ promptTokens, completionTokens, cachedTokens: cachedPromptTokens });
      }
      : observe,
  };
}
