// One piece of work done under a key: an HTTP request with its streamed answer, or one call on an LM Studio
// SDK socket. It admits the work (scope, then limits: a refused request is counted as such, an admitted one
// as a request), gives the engine the key's scheduling facts, and adds the work's tokens to the key's
// usage: each generated sequence's as it ends (a client that leaves mid-stream is still counted), and for
// work that runs no sequence (embeddings, speech) the counts its route reported, when it ends. Like the engine leases, the current one travels with the work's async calls, so the
// model service and the MCP hub can ask which key they serve without every route passing it along.
import { AsyncLocalStorage } from "node:async_hooks";
import type { RequestSchedule } from "../engine/types.ts";
import { allowsModel, type KeyGrant } from "./key-grant.ts";
import { missingScope, modelNotAllowed } from "./key-refusal.ts";
import type { KeyScope, RouteNeed } from "./key-scopes.ts";
import { limitReached } from "./rate-limits.ts";
import type { TokenCounts, UsageBook } from "./usage-book.ts";

const currentRequest = new AsyncLocalStorage<KeyRequest>();

export class KeyRequest {
  private countedSequences = false;
  private finished = false;

  constructor(readonly grant: KeyGrant, private readonly book: UsageBook) {}

  /** The request's key, if it runs under one. */
  static current(): KeyRequest | undefined {
    return currentRequest.getStore();
  }

  run<T>(work: () => T): T {
    return currentRequest.run(this, work);
  }

  /** Runs the server's own work (loading the models named on `serve`) outside any key's request. */
  static outside<T>(work: () => T): T {
    return currentRequest.exit(work);
  }

  /** Lets the work start, or throws a KeyRefusal: a scope it lacks (403), a limit it has reached (429). */
  admit(need: RouteNeed, what: string): void {
    if (need === "key") return;
    this.requireScope(need, what);
    const { owner, named } = this.grant;
    if (!named) return;
    const refusal = limitReached(this.grant, this.book);
    if (refusal) {
      this.book.recordRateLimited(owner);
      throw refusal;
    }
    this.book.recordRequest(owner);
  }

  /** A scope a request needs for what it asks beyond its route's own (MCP servers). */
  requireScope(scope: KeyScope, what: string): void {
    if (!this.grant.scopes.has(scope)) throw missingScope(this.grant.owner, scope, what, this.grant.scopes);
  }

  /** Throws a 403 when the key's models list leaves `model` out. */
  requireModel(model: string): void {
    if (!allowsModel(this.grant, model)) throw modelNotAllowed(this.grant.owner, model, this.grant.models ?? []);
  }

  /** The owner, its share and its sequence cap, for the engine's admission. */
  schedule(): RequestSchedule {
    const { owner, weight, maxParallel } = this.grant;
    return { owner, weight, ...(maxParallel !== undefined ? { maxParallel } : {}) };
  }

  /** One of the work's sequences has ended (finished, stopped or cancelled): its tokens count now. */
  addSequence(tokens: TokenCounts): void {
    this.countedSequences = true;
    if (this.grant.named) this.book.recordTokens(this.grant.owner, tokens);
  }

  /** The work has ended: what its route reported counts, unless its sequences were counted already. */
  finish(reported: TokenCounts | undefined): void {
    if (this.finished) return;
    this.finished = true;
    if (this.grant.named && reported && !this.countedSequences) this.book.recordTokens(this.grant.owner, reported);
  }
}

/** Throws a 403 when the current request's key may not use `model`; no key, no check. */
export function checkModelAllowed(model: string): void {
  KeyRequest.current()?.requireModel(model);
}
