// Two "machines" on one: network namespaces joined by a veth pair, each with an address of its own.
// The RPC test and benchmark run `llamux rpc-server` in one and `llamux serve --rpc` in the other.
// Needs root and iproute2. No traffic leaves the two namespaces.

export interface Spawned {
  proc: ReturnType<typeof Bun.spawn>;
  /** stdout and stderr so far */
  output: () => string;
}

export interface HostPair {
  /** the namespace and address of the first host */
  a: { ns: string; address: string };
  b: { ns: string; address: string };
  /** Runs a command inside a namespace, collecting its output. */
  spawnIn(ns: string, args: string[], env?: Record<string, string>): Spawned;
  /** Deletes both namespaces (and with them the veth pair). */
  remove(): void;
}

function sh(args: string[]): { ok: boolean; out: string } {
  const result = Bun.spawnSync(args, { stdout: "pipe", stderr: "pipe" });
  return { ok: result.exitCode === 0, out: `${result.stdout.toString()}${result.stderr.toString()}` };
}

/** Why namespaces cannot be made here, or undefined when they can. */
export function whyNoNamespaces(): string | undefined {
  if (process.getuid?.() !== 0) return "network namespaces need root";
  const probe = `llamux-probe-${process.pid}`;
  const added = sh(["ip", "netns", "add", probe]);
  if (!added.ok) return `"ip netns add" failed: ${added.out.trim() || "is iproute2 installed?"}`;
  sh(["ip", "netns", "del", probe]);
  return undefined;
}

/** Makes the two namespaces, `<prefix>-a-<pid>` and `<prefix>-b-<pid>`, on a /24 of 10.213.0.0/16. */
export function makeHostPair(prefix: string): HostPair {
  const id = process.pid % 10000;
  const subnet = `10.213.${process.pid % 250}`;
  const a = { ns: `${prefix}-a-${id}`, address: `${subnet}.1`, link: `${prefix.slice(0, 6)}a${id}` };
  const b = { ns: `${prefix}-b-${id}`, address: `${subnet}.2`, link: `${prefix.slice(0, 6)}b${id}` };
  const remove = () => {
    sh(["ip", "netns", "del", a.ns]);
    sh(["ip", "netns", "del", b.ns]);
  };
  remove();
  const steps = [
    ["ip", "netns", "add", a.ns],
    ["ip", "netns", "add", b.ns],
    ["ip", "link", "add", a.link, "netns", a.ns, "type", "veth", "peer", "name", b.link, "netns", b.ns],
    ...[a, b].flatMap((host) => [
      ["ip", "-n", host.ns, "link", "set", "lo", "up"],
      ["ip", "-n", host.ns, "addr", "add", `${host.address}/24`, "dev", host.link],
      ["ip", "-n", host.ns, "link", "set", host.link, "up"],
    ]),
  ];
  for (const step of steps) {
    const result = sh(step);
    if (!result.ok) {
      remove();
      throw new Error(`Cannot make the network namespaces: ${step.join(" ")}: ${result.out.trim()}`);
    }
  }
  return {
    a: { ns: a.ns, address: a.address },
    b: { ns: b.ns, address: b.address },
    spawnIn(ns, args, env = {}) {
      const proc = Bun.spawn(["ip", "netns", "exec", ns, ...args], { env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
      let output = "";
      const decoder = new TextDecoder();
      for (const stream of [proc.stdout, proc.stderr]) {
        void (async () => {
          for await (const chunk of stream) output += decoder.decode(chunk, { stream: true });
        })();
      }
      return { proc, output: () => output };
    },
    remove,
  };
}
