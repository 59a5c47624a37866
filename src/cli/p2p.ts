// `chrysalis p2p`: the node's libp2p identity. `p2p identity --out <file>` writes a new Ed25519 key as Hornet's
// identity.key (PKCS#8 PEM, readable by its owner only) and prints the peer id other nodes use in --peer.
import { parseArgs } from "node:util";
import { createP2pIdentity, writeP2pIdentityFile } from "../node/gossip/identity.js";
import type { Command } from "./commands.js";
import { UsageError, write } from "./io.js";

export const p2pCommand: Command = {
  summary: "identity: write a new libp2p identity file (Ed25519, PKCS#8 PEM) and print its peer id",
  usage: `chrysalis p2p identity --out <file> [--json]

Writes a new Ed25519 identity to <file> as Hornet keeps its identity.key (PKCS#8 PEM, "PRIVATE KEY"),
readable by its owner only (mode 0600); an existing file is never replaced. Prints the peer id
(12D3KooW…) that other nodes name in --peer <multiaddr>/p2p/<peer id>; give the file to
chrysalis serve --p2p-identity-file.

Options:
  --out <file>  where to write the identity (required)
  --json        print {"peerId", "file"} instead of the peer id alone`,
  async run(args) {
    const { values, positionals } = parseArgs({ args, options: { out: { type: "string" }, json: { type: "boolean", default: false } }, allowPositionals: true, strict: true });
    const [action, ...extra] = positionals;
    if (action !== "identity") throw new UsageError(action === undefined ? "p2p needs an action: identity" : `unknown p2p action "${action}": use identity`);
    if (extra.length > 0) throw new UsageError("p2p identity takes no positional arguments");
    if (values.out === undefined || values.out === "") throw new UsageError("p2p identity needs --out <file>");
    const identity = createP2pIdentity();
    try {
      await writeP2pIdentityFile(values.out, identity);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const reason = code === "EEXIST" ? "it exists already (an identity is never replaced; remove it first to make a new one)" : code === "ENOENT" ? "its folder does not exist" : code === "EACCES" ? "permission denied" : (error as Error).message;
      throw new Error(`cannot write the identity file ${JSON.stringify(values.out)}: ${reason}`, { cause: error });
    }
    write(values.json ? JSON.stringify({ peerId: identity.peerId, file: values.out }) : identity.peerId);
  },
};
