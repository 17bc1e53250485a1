// Whether an IP address belongs to this machine or a private network rather than the public internet:
// what a server fetching URLs for its clients must not reach (loopback, RFC 1918, link-local cloud
// metadata at 169.254.169.254, carrier-grade NAT, unique-local IPv6, multicast, reserved ranges); and the
// host check that image URLs, MCP server URLs and the redirects of pulls share.
import { lookup } from "node:dns/promises";
import { isIP, isIPv4, isIPv6 } from "node:net";

/** [first address, prefix length] of the IPv4 ranges that are not public unicast. */
const INTERNAL_V4: Array<[string, number]> = [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12],
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved and broadcast
];

function v4ToNumber(address: string): number {
  return address.split(".").reduce((value, part) => value * 256 + Number(part), 0);
}

function isInternalV4(address: string): boolean {
  const value = v4ToNumber(address);
  return INTERNAL_V4.some(([base, bits]) => Math.floor(value / 2 ** (32 - bits)) === Math.floor(v4ToNumber(base) / 2 ** (32 - bits)));
}

/** The eight 16-bit groups of an IPv6 address (an embedded dotted IPv4 tail becomes two groups). */
function v6Groups(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, "");
  const dotted = text.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) {
    const v4 = v4ToNumber(dotted[1]!);
    text = `${text.slice(0, -dotted[1]!.length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? text.split("::") as [string, string] : [text, undefined];
  const parse = (part: string) => (part ? part.split(":").map((g) => Number.parseInt(g, 16)) : []);
  const start = parse(head);
  const end = tail === undefined ? [] : parse(tail);
  return [...start, ...new Array(8 - start.length - end.length).fill(0), ...end];
}

function isInternalV6(address: string): boolean {
  const g = v6Groups(address);
  const embeddedV4 = () => `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
  if (g.slice(0, 7).every((x) => x === 0)) return g[7]! <= 1 || isInternalV4(embeddedV4()); // ::, ::1, IPv4-compatible
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return isInternalV4(embeddedV4()); // IPv4-mapped
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return isInternalV4(embeddedV4()); // NAT64
  if ((g[0]! & 0xfe00) === 0xfc00) return true; // unique local fc00::/7
  if ((g[0]! & 0xffc0) === 0xfe80) return true; // link-local fe80::/10
  if ((g[0]! & 0xffc0) === 0xfec0) return true; // site-local (deprecated) fec0::/10
  if ((g[0]! & 0xff00) === 0xff00) return true; // multicast
  if (g[0] === 0x2001 && g[1] === 0x0db8) return true; // documentation
  if (g[0] === 0x2002) return isInternalV4(`${g[1]! >> 8}.${g[1]! & 255}.${g[2]! >> 8}.${g[2]! & 255}`); // 6to4 wraps an IPv4
  if (g[0] === 0x0100 && g.slice(1, 4).every((x) => x === 0)) return true; // discard-only 100::/64
  return false;
}

/** True for any address that is not public unicast; an unparsable address counts as internal. */
export function isInternalAddress(address: string): boolean {
  if (isIPv4(address)) return isInternalV4(address);
  if (isIPv6(address)) return isInternalV6(address);
  return true;
}

/** Which of a host's addresses a guarded fetch refuses: internal ones (isInternalAddress) unless private ones are allowed. */
export interface AddressPolicy {
  allowPrivate: boolean;
  isBlocked?: (address: string) => boolean;
}

/** A URL's host resolved and checked: the address to connect to, or why it may not be reached (in words). */
export type AddressCheck = { ok: true; address: string } | { ok: false; reason: string; cause?: unknown };

/** Every address of the URL's host (the host itself when it is an address); throws when it does not resolve. */
export async function hostAddresses(url: URL): Promise<string[]> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host)) return [host];
  return (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
}

/**
 * Resolves the URL's host and checks every address it has (one internal address is enough to refuse it);
 * `allowFlag` is the server flag a refusal names, if there is one. Image URLs, MCP server URLs and the
 * redirects of pulls share this guard.
 */
export async function checkHostAddresses(url: URL, policy: AddressPolicy, allowFlag?: string): Promise<AddressCheck> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  let addresses: string[];
  try {
    addresses = await hostAddresses(url);
  } catch (error) {
    return { ok: false, reason: `host "${host}" does not resolve`, cause: error };
  }
  if (addresses.length === 0) return { ok: false, reason: `host "${host}" has no address` };
  const isBlocked = policy.isBlocked ?? (policy.allowPrivate ? () => false : isInternalAddress);
  const blocked = addresses.find(isBlocked);
  const hint = allowFlag ? ` (start the server with ${allowFlag} to allow it)` : "";
  if (blocked) return { ok: false, reason: `it resolves to ${blocked}, a loopback, private or link-local address${hint}` };
  return { ok: true, address: addresses[0]! };
}

/** The URL to request: for plain http, the checked address in place of the name (the Host header keeps the name). */
export function pinnedToAddress(url: URL, address: string): URL {
  if (url.protocol !== "http:") return url;
  const target = new URL(url);
  target.hostname = address.includes(":") ? `[${address}]` : address;
  return target;
}

