// Every socket a `llamux serve` process listens on gets the same guards. The listeners are not taken
// from a list in the test: they are read from the process itself (its sockets in /proc, in the LISTEN
// state), so a listener added later is checked too. On each: HTTP/1.0 without Host is a small 400 (not
// Bun's development error page), an idle keep-alive is closed, oversized headers and bodies are refused
// before they are buffered, garbage ends the connection, a foreign Host is refused, answers carry the
// security headers, and the server is still up afterwards.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { connect } from "node:net";
import { freePort, startServer, type RunningServer } from "./serve-fixture.ts";

const PROFILES = ["a", "b", "c"] as const;
type Profile = (typeof PROFILES)[number];
const servers: Partial<Record<Profile, RunningServer>> = {};
let sdkPort: number;

beforeAll(async () => {
  sdkPort = await freePort();
  const started = await Promise.all(PROFILES.map((profile) =>
    startServer(["--profile", profile, "--idle-timeout", "1", ...(profile === "c" ? ["--sdk-port", String(sdkPort)] : [])])));
  PROFILES.forEach((profile, index) => (servers[profile] = started[index]));
}, 120_000);
afterAll(() => Promise.all(Object.values(servers).map((server) => server.stop())));

/** The TCP ports process `pid` listens on: its socket inodes matched against the kernel's tables. */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (socket) inodes.add(socket[1]!);
    } catch {
      // closed while listing
    }
  }
  const ports = new Set<number>();
  for (const table of [`/proc/${pid}/net/tcp`, `/proc/${pid}/net/tcp6`]) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const columns = line.trim().split(/\s+/);
      // local_address is HEX_IP:HEX_PORT; state 0A is LISTEN; the inode is the tenth column.
      if (columns.length < 10 || columns[3] !== "0A" || !inodes.has(columns[9]!)) continue;
      ports.add(Number.parseInt(columns[1]!.split(":")[1]!, 16));
    }
  }
  return [...ports].sort((x, y) => x - y);
}

/** Sends raw bytes and resolves with everything the server sent once it closes the connection (or rejects after `ms`). */
function exchange(port: number, payload: string | Uint8Array, ms: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`port ${port}: the connection was still open after ${ms} ms; received ${JSON.stringify(received.slice(0, 200))}`));
    }, ms);
    socket.on("data", (data) => (received += data.toString("latin1")));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.write(payload);
  });
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1] ?? 0);
const bodyOf = (answer: string) => answer.slice(answer.indexOf("\r\n\r\n") + 4);
const headerOf = (answer: string, name: string) => new RegExp(`^${name}: *(.*)$`, "im").exec(answer.slice(0, answer.indexOf("\r\n\r\n")))?.[1]?.trim();

/** Nothing of Bun's development error page: no source lines, no paths of this machine. */
function expectNoInternals(answer: string): void {
  expect(answer).not.toContain(process.cwd());
  expect(answer).not.toContain("node_modules");
  expect(answer).not.toMatch(/\.ts:\d+/);
}

test("the listeners are found: one per profile, and profile c's SDK discovery port beside its main port", () => {
  expect(listeningPorts(servers.a!.pid)).toEqual([servers.a!.port]);
  expect(listeningPorts(servers.b!.pid)).toEqual([servers.b!.port]);
  expect(listeningPorts(servers.c!.pid)).toEqual([servers.c!.port, sdkPort].sort((x, y) => x - y));
});

describe.each(PROFILES)("every listener of profile %s", (profile) => {
  const ports = () => listeningPorts(servers[profile]!.pid);

  test("HTTP/1.0 without a Host header gets a small 400 in the profile's shape", async () => {
    for (const port of ports()) {
      for (const path of ["/lmstudio-greeting", "/llm", "/v1/models", "/no/such/route"]) {
        const answer = await exchange(port, `GET ${path} HTTP/1.0\r\n\r\n`, 5_000);
        expect({ port, path, status: statusOf(answer) }).toEqual({ port, path, status: 400 });
        expect(bodyOf(answer).length).toBeLessThan(1_000);
        expect(JSON.stringify(JSON.parse(bodyOf(answer)))).toContain("Host header");
        expectNoInternals(answer);
      }
    }
  });

  // This test and the next wait seconds for the idle timeout to close connections: they run side by
  // side, on every port at once.
  test.concurrent("a keep-alive connection left idle is closed", async () => {
    // Bun checks its timers every few seconds: 1 s of idle timeout closes within about 5.
    await Promise.all(ports().map(async (port) => {
      const answer = await exchange(port, "GET /lmstudio-greeting HTTP/1.1\r\nHost: localhost\r\n\r\n", 12_000);
      expect(statusOf(answer)).toBeGreaterThanOrEqual(200);
      expect(statusOf(answer)).toBeLessThan(500);
    }));
  }, 20_000);

  test.concurrent("oversized headers and bodies are refused before they are buffered", async () => {
    await Promise.all(ports().map(async (port) => {
      const headers = await exchange(port, `GET /lmstudio-greeting HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${"a".repeat(200_000)}\r\n\r\n`, 12_000);
      // Bun answers 431 and closes, or closes at once.
      if (headers !== "") expect(statusOf(headers)).toBe(431);
      // 2 GiB announced, one byte sent: the answer comes at once, and the stalled body is then closed.
      await Promise.all(["/v1/chat/completions", "/llm", "/lmstudio-greeting"].map(async (path) => {
        const body = await exchange(port, `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2147483648\r\n\r\n{`, 12_000);
        const status = statusOf(body);
        expect({ port, path, refused: status >= 400 && status < 500 }).toEqual({ port, path, refused: true });
        expectNoInternals(body);
      }));
    }));
  }, 60_000);

  test("garbage ends the connection without a server error", async () => {
    const garbage = [
      new Uint8Array([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03, ...Array.from({ length: 64 }, (_, i) => (i * 37) & 0xff)]),
      "\x00\xff\xfe\r\n\r\n",
      "GET / HTTP/9.9\r\nHost: localhost\r\n\r\n",
      "GET /lmstudio-greeting HTTP/1.1\r\nHost: localhost\r\nContent-Length: -5\r\n\r\n",
      "GET /lmstudio-greeting HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      "\r\n\r\n\r\n",
    ];
    for (const port of ports()) {
      for (const payload of garbage) {
        const answer = await exchange(port, payload, 12_000);
        // 505 is HTTP's own answer to an unknown version, not a failure of the server.
        const status = statusOf(answer);
        expect({ port, status, failed: status >= 500 && status !== 505 }).toEqual({ port, status, failed: false });
        expectNoInternals(answer);
      }
    }
  }, 60_000);

  test("a foreign Host is refused, and every answer forbids framing and sniffing", async () => {
    for (const port of ports()) {
      const refused = await exchange(port, "GET /lmstudio-greeting HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n", 5_000);
      expect({ port, status: statusOf(refused) }).toEqual({ port, status: 403 });
      for (const answer of [refused, await exchange(port, "GET /no/such/route HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", 5_000)]) {
        expect(headerOf(answer, "x-frame-options")).toBe("DENY");
        expect(headerOf(answer, "x-content-type-options")).toBe("nosniff");
        expectNoInternals(answer);
      }
    }
  });

  test("after all that, every listener still answers", async () => {
    for (const port of ports()) {
      const answer = await exchange(port, "GET /no/such/route HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", 5_000);
      expect(statusOf(answer)).toBe(404);
    }
    expect(ports().length).toBeGreaterThan(0);
  });
});
