// Connection caps per IPv6 block, checked on the edge object itself: loopback has only ::1, so the addresses of other
// /64s, /56s and /48s cannot be opened here as real sockets.
import { describe, expect, it } from "vitest";
import { addressBlocks, clientKey, createEdge } from "../src/node/index.js";

describe("IPv6 clients are bounded per /64 and, wider, per /56 and /48", () => {
  it("keys an address by its /64 and names its /56 and /48", () => {
    expect(clientKey("2001:db8:1:2a3:4:5:6:7")).toBe("2001:db8:1:2a3::/64");
    expect(addressBlocks("2001:db8:1:2a3:4:5:6:7")).toEqual([
      { key: "2001:db8:1:2a3::/64", share: 1 },
      { key: "2001:db8:1:200::/56", share: 4 },
      { key: "2001:db8:1::/48", share: 16 },
    ]);
    expect(addressBlocks("::ffff:1.2.3.4")).toHaveLength(3);
    expect(addressBlocks("10.0.0.1")).toEqual([{ key: "10.0.0.1", share: 1 }]);
    expect(addressBlocks("not an address")).toEqual([{ key: "not an address", share: 1 }]);
  });

  it("walking the /64s of one /56 stops at 4 clients' share, of one /48 at 16; other blocks are still admitted", () => {
    const edge = createEdge({ limits: { maxConnectionsPerAddress: 2, maxConnections: 1000 } });
    const admit = (peer: string) => edge.admitConnection(peer);
    // One /64 holds 2.
    expect(admit("2001:db8:0:1::1").admitted).toBe(true);
    expect(admit("2001:db8:0:1::2").admitted).toBe(true);
    expect(admit("2001:db8:0:1::3")).toEqual({ admitted: false, reason: "per-address" });
    // The /56 2001:db8:0:0::/56 holds 4 × 2 = 8: three more /64s fill it.
    for (let i = 2; i <= 4; i++) for (let j = 0; j < 2; j++) expect(admit(`2001:db8:0:${i}::${j + 1}`).admitted).toBe(true);
    expect(admit("2001:db8:0:5::1")).toEqual({ admitted: false, reason: "per-prefix" });
    // The /48 holds 16 × 2 = 32: the other /56s of 2001:db8:0::/48 take 24 more, then it is full.
    const held: { release(): void }[] = [];
    for (let site = 1; site <= 3; site++)
      for (let i = 0; i < 4; i++)
        for (let j = 0; j < 2; j++) {
          const a = admit(`2001:db8:0:${(site << 8) + i}::${j + 1}`);
          expect(a.admitted).toBe(true);
          if (a.admitted) held.push(a);
        }
    expect(admit("2001:db8:0:400::1")).toEqual({ admitted: false, reason: "per-prefix" });
    // Another /48 and IPv4 are unaffected; releasing one connection makes room again.
    expect(admit("2001:db8:1::1").admitted).toBe(true);
    expect(admit("192.0.2.1").admitted).toBe(true);
    held[0]!.release();
    held[0]!.release();
    expect(admit("2001:db8:0:400::1").admitted).toBe(true);
    expect(admit("2001:db8:0:400::2")).toEqual({ admitted: false, reason: "per-prefix" });
  });

  it("a trusted proxy counts against the total only", () => {
    const edge = createEdge({ limits: { maxConnectionsPerAddress: 1, maxConnections: 5, trustProxy: ["2001:db8::/32"] } });
    for (let i = 0; i < 5; i++) expect(edge.admitConnection("2001:db8::1").admitted).toBe(true);
    expect(edge.admitConnection("2001:db9::1")).toEqual({ admitted: false, reason: "total" });
  });
});
