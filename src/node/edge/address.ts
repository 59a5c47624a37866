// Who the client is: the socket's peer, or — only when that peer is a proxy the operator trusts — the nearest untrusted
// address in X-Forwarded-For. Limits key IPv6 clients by their /64, the block one subscriber gets, so that an attacker
// cannot become a million clients by walking the addresses of one prefix; connections are also bounded per /56 and /48
// (the blocks a site or a provider's customer gets), so that walking the /64s of one allocation does not help either.
import { BlockList, isIPv4, isIPv6 } from "node:net";
import { ProtocolError } from "../../bytes/errors.js";

/** "::ffff:1.2.3.4" → "1.2.3.4"; other addresses unchanged; undefined → "unknown". */
export function normalizeAddress(address: string | undefined): string {
  if (address === undefined || address === "") return "unknown";
  if (address.startsWith("::ffff:") && isIPv4(address.slice(7))) return address.slice(7);
  return address;
}

/** The eight 16-bit groups of an IPv6 address (with an embedded IPv4 tail read too); undefined if it is not one. */
function ipv6Groups(address: string): number[] | undefined {
  const zone = address.indexOf("%");
  const text = zone >= 0 ? address.slice(0, zone) : address;
  if (!isIPv6(text)) return undefined;
  const halves = text.split("::");
  const parse = (part: string): number[] => {
    if (part === "") return [];
    const out: number[] = [];
    for (const piece of part.split(":")) {
      if (piece.includes(".")) {
        const [a, b, c, d] = piece.split(".").map(Number) as [number, number, number, number];
        out.push((a << 8) | b, (c << 8) | d);
      } else out.push(Number.parseInt(piece, 16));
    }
    return out;
  };
  const head = parse(halves[0]!);
  const tail = halves.length > 1 ? parse(halves[1]!) : [];
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

function prefixKey(groups: readonly number[], bits: 64 | 56 | 48): string {
  const whole = Math.floor(bits / 16);
  const kept = groups.slice(0, Math.ceil(bits / 16));
  if (bits % 16 !== 0) kept[whole] = kept[whole]! & (0xffff << (16 - (bits % 16))) & 0xffff;
  return `${kept.map((g) => g.toString(16)).join(":")}::/${bits}`;
}

/** The key limits count a client under: an IPv4 address as it is, an IPv6 address as its /64 prefix. */
export function clientKey(address: string): string {
  if (isIPv4(address)) return address;
  const groups = ipv6Groups(address);
  return groups === undefined ? address : prefixKey(groups, 64);
}

/**
 * The blocks connection limits count an address in, each with the multiple of one client's cap it may hold: the
 * client itself (an IPv4 address, an IPv6 /64) at 1, then an IPv6 client's /56 at 4 and /48 at 16.
 */
export function addressBlocks(address: string): {
  /** The block's key: the IPv4 address, or the IPv6 prefix written as "…::/bits". */
  key: string;
  /** The multiple of maxConnectionsPerAddress the block may hold. */
  share: number;
}[] {
  const groups = isIPv4(address) ? undefined : ipv6Groups(address);
  if (groups === undefined) return [{ key: address, share: 1 }];
  return [
    { key: prefixKey(groups, 64), share: 1 },
    { key: prefixKey(groups, 56), share: 4 },
    { key: prefixKey(groups, 48), share: 16 },
  ];
}

/** An X-Forwarded-For header's value(s), as node:http gives them. */
export type ForwardedFor = string | string[] | undefined;

/** A set of trusted proxies, from CIDRs ("10.0.0.0/8", "fd00::/8") or single addresses. */
export class TrustedProxies {
  readonly #list = new BlockList();
  /** How many entries it was given; 0 trusts no proxy, so every socket peer is the client. */
  readonly size: number;
  /** The entries as given (trimmed). */
  readonly entries: readonly string[];

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const [address, bits] = entry.trim().split("/") as [string, string | undefined];
      const family = isIPv4(address) ? "ipv4" : isIPv6(address) ? "ipv6" : undefined;
      const max = family === "ipv4" ? 32 : 128;
      const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
      if (family === undefined || !(prefix >= 0 && prefix <= max)) {
        throw new ProtocolError("INVALID_ARGUMENT", `trusted proxy ${JSON.stringify(entry)} is not an address or a CIDR block`, { path: "trustProxy" });
      }
      this.#list.addSubnet(address, prefix, family);
    }
    this.size = entries.length;
    this.entries = entries.map((e) => e.trim());
  }

  /** Whether `address` (as normalizeAddress gives it) is in one of the trusted blocks; false for anything that is not
   * an IP address. */
  has(address: string): boolean {
    if (this.size === 0) return false;
    if (isIPv4(address)) return this.#list.check(address, "ipv4");
    if (isIPv6(address)) return this.#list.check(address, "ipv6");
    return false;
  }

  /**
   * The client's address for a request whose socket peer is `peer`: the peer itself unless it is trusted; then
   * X-Forwarded-For read from the right (each hop appends the address it saw), skipping trusted hops, up to the
   * first untrusted address. A malformed entry ends the walk at the last trusted hop, so a client cannot smuggle an
   * address past the proxy by writing its own X-Forwarded-For.
   */
  clientAddress(peer: string, given: ForwardedFor | (() => ForwardedFor)): string {
    let client = normalizeAddress(peer);
    if (!this.has(client)) return client;
    const forwardedFor = typeof given === "function" ? given() : given;
    if (forwardedFor === undefined) return client;
    const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor).split(",");
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = normalizeAddress(hops[i]!.trim());
      if (!isIPv4(hop) && !isIPv6(hop)) break;
      client = hop;
      if (!this.has(hop)) break;
    }
    return client;
  }
}
