// Entry of an engine child process (`llamux __engine`): hosts one Engine and talks to the parent over
// IPC. A native crash here kills only this process; the parent turns it into errors and can reload.
import type { ChildMessage } from "./protocol.ts";
import { engineMessageHandler } from "./engine-host.ts";

function send(message: ChildMessage): void {
  process.send!(message);
}

// The child must not outlive its parent, even one killed with SIGKILL: the IPC channel closing or a
// change of parent process id (re-parenting to init) ends it.
function exitWithParent(): void {
  const parent = process.ppid;
  process.on("disconnect", () => process.exit(0));
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 500).unref();
}

export async function engineChildMain(): Promise<void> {
  if (!process.send) {
    process.stderr.write("llamux __engine is internal: it is started by the llamux server\n");
    process.exit(2);
  }
  exitWithParent();
  process.on("message", engineMessageHandler(send, () => process.exit(0)));
}

if (import.meta.main) await engineChildMain();
