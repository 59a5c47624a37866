// The js-libp2p stack every Hornet 1.x speaks (GOSSIP.md §1): TCP, Noise, Yamux over multistream-select, loaded by
// dynamic import when gossip starts, so that importing chrysalis-core/node never loads libp2p.
//
// The 2.x line (libp2p 2.8.8, @libp2p/tcp 10, noise 16, yamux 7) runs on Node 20 as it is: js-libp2p 3.x and the newest
// mortice (3.3, through it-queue) call Promise.withResolvers, which Node 20 lacks. package.json pins mortice 3.1.0 and
// @libp2p/peer-store 11.2.2 (the last that accepts it) so that npm resolves no copy that does.
import type { Libp2p } from "libp2p";
import type { Multiaddr } from "@multiformats/multiaddr";

export type Host = Libp2p;
export type HostConnection = Awaited<ReturnType<Host["dial"]>>;
export type HostStream = Awaited<ReturnType<HostConnection["newStream"]>>;
export type HostPeerId = HostConnection["remotePeer"];
export type { Multiaddr };

export interface HostOptions {
  readonly seed: Uint8Array;
  readonly listen: readonly string[];
  /** Peers refused at the encrypted handshake (inbound) and never dialled: the ban table. */
  readonly refuse: (peerId: string) => boolean;
  readonly maxConnections: number;
  readonly inboundConnectionsPerSecond: number;
  readonly dialTimeoutMs: number;
}

export interface Stack {
  createHost(options: HostOptions): Promise<Host>;
  multiaddr(text: string): Multiaddr;
}

let loading: Promise<Stack> | undefined;

/** Loads the libp2p modules once. */
export function loadStack(): Promise<Stack> {
  loading ??= (async (): Promise<Stack> => {
    const [{ createLibp2p }, { tcp }, { noise }, { yamux }, { generateKeyPairFromSeed }, { multiaddr }] = await Promise.all([
      import("libp2p"),
      import("@libp2p/tcp"),
      import("@chainsafe/libp2p-noise"),
      import("@chainsafe/libp2p-yamux"),
      import("@libp2p/crypto/keys"),
      import("@multiformats/multiaddr"),
    ]);
    return {
      multiaddr,
      async createHost(options) {
        const privateKey = await generateKeyPairFromSeed("Ed25519", options.seed);
        return createLibp2p({
          start: false,
          privateKey,
          addresses: { listen: [...options.listen] },
          transports: [tcp()],
          connectionEncrypters: [noise()],
          streamMuxers: [yamux()],
          // Gossip's heartbeats are its liveness check; libp2p's pings would open a stream per connection every 10 s.
          connectionMonitor: { enabled: false },
          connectionManager: {
            maxConnections: options.maxConnections,
            inboundConnectionThreshold: options.inboundConnectionsPerSecond,
            dialTimeout: options.dialTimeoutMs,
          },
          connectionGater: {
            denyInboundEncryptedConnection: (peerId) => options.refuse(peerId.toString()),
            denyDialPeer: (peerId) => options.refuse(peerId.toString()),
          },
        });
      },
    };
  })();
  // A failed load (a missing optional install) is tried again on the next start.
  loading.catch(() => (loading = undefined));
  return loading;
}
