// A gateway node: the submission pipeline in front of an upstream node, taking the network name and minimum
// PoW score from the upstream's /api/v1/info and forwarding what it accepts as raw bytes.
import { createNode, type ChrysalisNode, type NodeOptions } from "./pipeline.js";
import { UpstreamStore, type UpstreamOptions } from "./upstream.js";

/**
 * How a gateway reaches its upstream, and the node options that stay the caller's: `pow` and `name` are used; the
 * network, minimum PoW score and HRP come from the upstream's /api/v1/info, and parents from its tips.
 */
export interface GatewayOptions extends Omit<NodeOptions, "store" | "network" | "minPoWScore" | "bech32Hrp" | "genesis" | "ledger" | "checkSolidity" | "tipSource">, UpstreamOptions {}

/** Reads the upstream's info and builds a node that fills, mines and checks locally and stores upstream. */
export async function createGatewayNode(upstreamUrl: string, options: GatewayOptions = {}): Promise<ChrysalisNode> {
  const store = new UpstreamStore(upstreamUrl, options);
  const info = await store.info();
  const nodeOptions: NodeOptions = { store, network: info.networkId, minPoWScore: info.minPoWScore, bech32Hrp: info.bech32HRP, checkSolidity: false, tipSource: (count) => store.tips(count) };
  if (options.pow !== undefined) nodeOptions.pow = options.pow;
  if (options.name !== undefined) nodeOptions.name = options.name;
  return createNode(nodeOptions);
}
