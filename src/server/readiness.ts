// Whether the models named on the command line have loaded. Profile b's /health answers 503 until they
// have, as vLLM is not up before its model is (and llama-server answers 503 while loading), so scripts,
// containers and orchestrators that wait on it send their first request to a loaded model.
export class StartupReadiness {
  private readonly loading = new Set<string>();
  private readonly failed = new Map<string, string>();

  /** Follows the load of a model named on the command line; its failure keeps the server not ready. */
  track(model: string, load: Promise<unknown>): void {
    this.loading.add(model);
    load.then(
      () => this.loading.delete(model),
      (error: unknown) => {
        this.loading.delete(model);
        this.failed.set(model, error instanceof Error ? error.message : String(error));
      },
    );
  }

  /** Why the server is not ready yet, or undefined once every tracked model has loaded. */
  notReady(): string | undefined {
    const [failed] = this.failed.entries();
    if (failed) return `Cannot serve "${failed[0]}": it failed to load (${failed[1]})`;
    const [loading] = this.loading;
    return loading === undefined ? undefined : `Loading model "${loading}"`;
  }
}
