// Calls `poll` now and again `intervalMs` after each call ends, while `active`; a failed call is retried on
// the next turn. The Developer tab's request log and key usage poll this way.
import { useEffect } from "preact/hooks";

export function usePolling(active: boolean, intervalMs: number, start: () => () => Promise<void>): void {
  useEffect(() => {
    if (!active) return;
    const poll = start();
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const turn = async () => {
      try {
        await poll();
      } catch {
        // the next turn tries again
      }
      if (!stopped) timer = setTimeout(turn, intervalMs);
    };
    void turn();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [active]);
}
