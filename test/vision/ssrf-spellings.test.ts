// The image-URL fetcher against the spellings of internal addresses a security pass tried: every one
// is refused before any connection, and a server listening on loopback sees no request. Whatever
// WHATWG URL parsing makes of a spelling (decimal, hex, octal, short forms, IPv4-mapped IPv6, trailing
// dots, userinfo), the address that would be connected to is what gets checked.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { defaultImageFetchPolicy, fetchImageUrl } from "../../src/vision/image-fetch.ts";
import { ImageInputError } from "../../src/vision/image-input-error.ts";

let server: ReturnType<typeof Bun.serve>;
let hits = 0;

beforeAll(() => {
  server = Bun.serve({ hostname: "0.0.0.0", port: 0, fetch: () => { hits++; return new Response(new Uint8Array([0xff, 0xd8, 0xff])); } });
});
afterAll(() => server.stop(true));

const spellings = (port: number) => [
  `http://127.0.0.1:${port}/`, `http://127.1:${port}/`, `http://127.0.1:${port}/`, `http://2130706433:${port}/`, `http://0x7f000001:${port}/`,
  `http://0x7f.0x0.0x0.0x1:${port}/`, `http://0177.0.0.1:${port}/`, `http://017700000001:${port}/`, `http://127.000.000.001:${port}/`,
  `http://0:${port}/`, `http://0.0.0.0:${port}/`, `http://localhost:${port}/`, `http://LOCALHOST:${port}/`, `http://localhost.:${port}/`,
  `http://[::1]:${port}/`, `http://[0:0:0:0:0:0:0:1]:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`, `http://[::ffff:7f00:1]:${port}/`,
  `http://[0:0:0:0:0:ffff:127.0.0.1]:${port}/`, `http://[::]:${port}/`, `http://[::127.0.0.1]:${port}/`, `http://user:pass@127.0.0.1:${port}/`,
  `http://evil.example@127.0.0.1:${port}/`, `http://127.0.0.1%2e:${port}/`, `http://①②⑦.0.0.1:${port}/`, `http://127。0。0。1:${port}/`,
  `https://127.0.0.1:${port}/`, `http://169.254.169.254/latest/meta-data/`, `http://[fd00::1]/`, `http://10.0.0.1/`, `http://192.168.0.1/`,
  `http://172.16.0.1/`, `http://100.64.0.1/`, `http://[fe80::1]/`,
];

test("34 spellings of internal addresses are refused before connecting", async () => {
  const list = spellings(server.port!);
  expect(list).toHaveLength(34);
  for (const url of list) {
    const error = await fetchImageUrl(url, { ...defaultImageFetchPolicy, timeoutMs: 2_000 }).then(() => undefined, (e: unknown) => e);
    if (!(error instanceof ImageInputError)) throw new Error(`${url} was not refused (${String(error)})`);
    expect(error.message).not.toContain("HTTP 200");
  }
  expect(hits).toBe(0);
}, 60_000);
