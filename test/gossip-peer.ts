// A gossip peer in a process of its own, for the gossip tests (bundled by test/gossip-helpers.ts with esbuild, libp2p
// left external). argv[2] is its JSON config; it prints JSON lines (events, replies) and takes JSON commands on stdin.
// Mode "node" runs createGossip over a MemoryGossipNode; mode "raw" runs a bare libp2p host that writes raw bytes on a
// gossip stream, as a hostile or broken peer would.
import { createInterface } from "node:readline";
import { fromHex, toHex } from "../src/bytes/hex.js";
import { createGossip, p2pIdentityFromSeed, type GossipLimits } from "../src/node/gossip/index.js";
import { loadStack, type HostStream } from "../src/node/gossip/libp2p.js";
import { MemoryGossipNode } from "./gossip-memory-node.js";

/** The peer's JSON config (argv[2]); spawnPeer (gossip-helpers.ts) fills what its caller leaves out. */
export interface Config {
  mode: "node" | "raw";
  network: string;
  /** 64 hex characters: the identity seed, so that a restarted peer keeps its id. */
  seed: string;
  listen?: string[];
  peers?: { multiAddress: string; alias?: string }[];
  limits?: GossipLimits;
  status?: { solid: number; pruned: number; latest: number };
  relay?: boolean;
  ignoreUnrequested?: boolean;
}

const config = JSON.parse(process.argv[2]!) as Config;
const print = (line: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(line)}\n`);
const identity = p2pIdentityFromSeed(fromHex(config.seed));
type Command = { n: number; cmd: string; args: unknown[] };
const handlers: Record<string, (...args: never[]) => unknown> = {};

if (config.mode === "node") {
  const node = new MemoryGossipNode(config.network);
  node.relay = config.relay ?? true;
  node.ignoreUnrequested = config.ignoreUnrequested ?? false;
  if (config.status !== undefined) Object.assign(node, config.status);
  const gossip = createGossip({ node, identity, listen: config.listen ?? ["/ip4/127.0.0.1/tcp/0"], peers: config.peers ?? [], ...config.limits, onEvent: (event) => print({ event: "gossip", ...event, error: "error" in event ? String(event.error) : undefined }) });
  node.gossip = gossip;
  const receive = node.receive.bind(node);
  node.receive = async (bytes, id, from, requested) => {
    const verdict = await receive(bytes, id, from, requested);
    print({ event: "received", id: toHex(id), from, requested, verdict });
    return verdict;
  };
  gossip.onHeartbeat((heartbeat) => print({ event: "heartbeat", ...heartbeat }));
  Object.assign(handlers, {
    add: (hex: string) => node.add(fromHex(hex)),
    addMilestone: (index: number, hex: string) => node.addMilestone(index, fromHex(hex)),
    forget: (id: string) => node.messages.delete(id),
    has: (id: string) => node.messages.has(id),
    broadcast: (hex: string) => {
      const bytes = fromHex(hex);
      const id = node.add(bytes);
      return gossip.broadcast(bytes, fromHex(id));
    },
    request: (id: string, index: number, preventDiscard: boolean) => gossip.request(fromHex(id), index, { preventDiscard }),
    requestMilestone: (index: number) => gossip.requestMilestone(index),
    setStatus: (solid: number, pruned: number, latest: number) => {
      Object.assign(node, { solid, pruned, latest });
      gossip.statusChanged();
    },
    addPeer: (multiAddress: string, alias?: string) => gossip.addPeer(multiAddress, alias),
    removePeer: (peerId: string) => gossip.removePeer(peerId),
    peers: () => gossip.peers(),
    stats: () => gossip.stats(),
    received: () => node.received,
    withResolvers: () => typeof (Promise as unknown as { withResolvers?: unknown }).withResolvers,
    stop: async () => {
      await gossip.stop();
      setImmediate(() => process.exit(0));
    },
  });
  await gossip.start();
  print({ event: "ready", peerId: gossip.peerId, addresses: gossip.listenAddresses() });
} else {
  // A bare host: TCP, Noise, Yamux and multistream-select, and then whatever bytes the test says.
  const stack = await loadStack();
  const host = await stack.createHost({ seed: identity.seed, listen: config.listen ?? ["/ip4/127.0.0.1/tcp/0"], refuse: () => false, maxConnections: 16, inboundConnectionsPerSecond: 100, dialTimeoutMs: 5000 });
  await host.start();
  let stream: HostStream | undefined;
  let closed: string | undefined;
  let readBytes = 0;
  let head = "";
  // The frames read, parsed as Hornet's TLV (type u8, length u16 LE): a count per type and the payload (hex) of each
  // message frame, the first 10,000 of them, so that a test can tell which messages the node sent.
  let unread = new Uint8Array(0);
  let frameCounts: Record<number, number> = {};
  let messageFrames: string[] = [];
  const pending: Uint8Array[] = [];
  let wake: (() => void) | undefined;
  async function* outgoing(): AsyncGenerator<Uint8Array> {
    for (;;) {
      while (pending.length > 0) yield pending.shift()!;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  }
  /** Reads a stream to its end, counting its bytes and keeping the first 64 (as hex). */
  function read(from: HostStream): void {
    closed = undefined;
    readBytes = 0;
    head = "";
    unread = new Uint8Array(0);
    frameCounts = {};
    messageFrames = [];
    void (async () => {
      try {
        for await (const chunk of from.source) {
          readBytes += chunk.byteLength;
          if (head.length < 128) head += toHex(chunk.subarray()).slice(0, 128 - head.length);
          parseFrames(chunk.subarray());
        }
        closed ??= "source ended";
      } catch (error) {
        closed ??= `source: ${String(error)}`;
      }
    })();
  }
  function parseFrames(chunk: Uint8Array): void {
    const joined = new Uint8Array(unread.length + chunk.length);
    joined.set(unread);
    joined.set(chunk, unread.length);
    let at = 0;
    while (joined.length - at >= 3) {
      const type = joined[at]!;
      const length = joined[at + 1]! | (joined[at + 2]! << 8);
      if (joined.length - at - 3 < length) break;
      frameCounts[type] = (frameCounts[type] ?? 0) + 1;
      if (type === 2 && messageFrames.length < 10_000) messageFrames.push(toHex(joined.subarray(at + 3, at + 3 + length)));
      at += 3 + length;
    }
    unread = joined.slice(at);
  }
  Object.assign(handlers, {
    open: async (multiAddress: string, protocol: string) => {
      const connection = await host.dial(stack.multiaddr(multiAddress), { signal: AbortSignal.timeout(5000) });
      stream = await connection.newStream(protocol, { signal: AbortSignal.timeout(5000) });
      const opened = stream;
      void opened.sink(outgoing()).catch((error: unknown) => (closed ??= `sink: ${String(error)}`));
      read(opened);
      return true;
    },
    /** Takes gossip streams others open to it, and reads them (counting bytes as `open` does). */
    listen: async (protocol: string) => {
      await host.handle(protocol, ({ stream: incoming }) => {
        stream = incoming;
        read(incoming);
      });
      return true;
    },
    dial: async (multiAddress: string) => {
      try {
        await host.dial(stack.multiaddr(multiAddress), { signal: AbortSignal.timeout(5000) });
        return "connected";
      } catch (error) {
        return `failed: ${String(error)}`;
      }
    },
    write: (hex: string, times = 1) => {
      const bytes = fromHex(hex);
      for (let i = 0; i < times; i++) pending.push(bytes);
      wake?.();
      return pending.length;
    },
    state: () => ({ open: stream !== undefined && closed === undefined, closed, readBytes, head, connections: host.getConnections().length }),
    /** The frames read on the current stream: counts by type, and the message frames' payloads from `from` on. */
    frames: (from = 0) => ({ counts: frameCounts, messages: messageFrames.slice(from), total: messageFrames.length }),
    stop: async () => {
      await host.stop();
      setImmediate(() => process.exit(0));
    },
  });
  print({ event: "ready", peerId: host.peerId.toString(), addresses: host.getMultiaddrs().map(String) });
}

for await (const line of createInterface({ input: process.stdin })) {
  const { n, cmd, args } = JSON.parse(line) as Command;
  try {
    const handler = handlers[cmd];
    if (handler === undefined) throw new Error(`unknown command ${cmd}`);
    const result = await (handler as (...a: unknown[]) => unknown)(...args);
    print({ reply: n, result: result ?? null });
  } catch (error) {
    print({ reply: n, error: error instanceof Error ? `${(error as { code?: string }).code ?? error.name}: ${error.message}` : String(error) });
  }
}
// stdin closed: the test that started this peer is gone.
process.exit(0);
