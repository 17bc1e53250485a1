// A real terminal for tests of the interactive CLI: tmux runs a command in a detached session, the test
// types keys and reads the screen.

export class TerminalSession {
  constructor(
    readonly name: string,
    /** Lines of scroll-back the screen includes. */
    private readonly history = 200,
  ) {}

  /** Starts `command` (a shell line) in a detached session of the given size. */
  start(command: string, width: number, height: number): void {
    this.tmux("new-session", "-d", "-s", this.name, "-x", String(width), "-y", String(height), command);
  }

  screen(): string {
    return this.tmux("capture-pane", "-p", "-J", "-t", this.name, "-S", `-${this.history}`);
  }

  keys(...keys: string[]): void {
    this.tmux("send-keys", "-t", this.name, ...keys);
  }

  alive(): boolean {
    return Bun.spawnSync(["tmux", "has-session", "-t", this.name]).exitCode === 0;
  }

  kill(): void {
    this.tmux("kill-session", "-t", this.name);
  }

  /** Waits until the screen satisfies `check` (generous: the machine may be busy). */
  async waitFor(check: (text: string) => boolean, what: string, timeoutMs = 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const text = this.screen();
      if (check(text)) return text;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; screen:\n${text}`);
      await Bun.sleep(100);
    }
  }

  private tmux(...args: string[]): string {
    return Bun.spawnSync(["tmux", ...args], { stdout: "pipe", stderr: "pipe" }).stdout.toString();
  }
}
