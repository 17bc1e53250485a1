// An engine's LoRA adapters per request as its API offers them: loading and unloading (vLLM's
// /v1/load_lora_adapter and /v1/unload_lora_adapter), and the disk tier's store of each adapter's states.
// A state computed under an adapter is wrong under any other, so each adapter has a store of its own,
// whose identity names the adapter file (prompt-cache/open-tiers.ts): opened once the base model's store
// is open, attached to the sequences' memory while the adapter is loaded, flushed and closed with the engine.
import { logger } from "../log.ts";
import type { AdapterSchedule } from "./adapter-schedule.ts";
import type { ServedAdapter } from "./lora-adapters.ts";
import type { DiskPromptStore } from "./prompt-cache/disk-store.ts";

const log = logger("engine");

export class EngineAdapters {
  /** Adapters whose disk store is open or opening, the openings, and the stores opened. */
  private readonly opened = new Set<number>();
  private readonly openings: Array<Promise<void>> = [];
  private readonly stores: DiskPromptStore[] = [];
  private closed = false;

  /**
   * `baseDisk` resolves with whether the base model's store opened (adapters get stores only beside it);
   * `openStore` opens the store of the states computed under an adapter file.
   */
  constructor(
    private readonly schedule: AdapterSchedule, private readonly baseDisk: Promise<boolean>,
    private readonly openStore: (adapterPath: string) => Promise<DiskPromptStore | undefined>,
  ) {
    for (const adapter of schedule.adapters.served()) this.openDisk(adapter);
  }

  /** Resolves once the stores of the adapters opened so far are open. */
  ready(): Promise<void> {
    return Promise.all(this.openings).then(() => {});
  }

  /**
   * Loads an adapter requests may then name; the same file under the same name again changes nothing,
   * another file replaces it. EngineError when the file cannot serve (lora-adapters.ts).
   */
  load(name: string, path: string): void {
    const adapter = this.schedule.adapters.load(name, path);
    this.schedule.freeUnused();
    this.openDisk(adapter);
  }

  /** Unloads an adapter (its requests in flight finish on it); false when none has the name. */
  unload(name: string): boolean {
    const unloaded = this.schedule.adapters.unload(name);
    this.schedule.freeUnused();
    return unloaded;
  }

  /** Resolves once what the adapters' stores were given is written. */
  async flush(): Promise<void> {
    await this.ready();
    await Promise.all(this.stores.map((store) => store.flush()));
  }

  /** No more stores open; those open finish their writes, then close. */
  close(): Promise<void> {
    this.closed = true;
    return Promise.all(this.stores.map((store) => store.flush().then(() => store.close()))).then(() => {});
  }

  private openDisk(adapter: ServedAdapter): void {
    if (this.opened.has(adapter.id)) return;
    this.opened.add(adapter.id);
    const opening = this.baseDisk.then(async (baseOpen) => {
      if (!baseOpen || this.closed) return;
      const store = await this.openStore(adapter.path);
      if (!store) return;
      if (this.closed || !this.schedule.adapters.holds(adapter)) return store.close();
      this.stores.push(store);
      this.schedule.attachDisk(adapter.id, store);
    }).catch((error: Error) => log.warn(`prompt cache on disk: cannot open it for LoRA adapter "${adapter.name}", going on without: ${error.message}`));
    this.openings.push(opening);
  }
}
