// `chrysalis coordinator public-key`: the public keys a coordinator signs milestones with, for the followers that
// check them (`serve --coordinator-public-key`): of the seeds in a key file, or of the key a node made for itself.
import { parseArgs } from "node:util";
import { toHex } from "../bytes/hex.js";
import { milestonePublicKey } from "../model/milestone.js";
import type { Command } from "./commands.js";
import { UsageError, write } from "./io.js";
import { COORDINATOR_KEY_SECRET, loadCoordinatorKeys, openSharedStore } from "./setup.js";

export const coordinatorCommand: Command = {
  summary: "public-key: print the public keys a coordinator signs milestones with (give them to followers)",
  usage: `chrysalis coordinator public-key (--coordinator-key-file <file> | --data-dir <dir> | --database <postgres://…>)

Prints the hex Ed25519 public key of each seed in the key file, one a line, ascending (as milestones list them);
or, with --data-dir or --database, the key a node without --coordinator-key-file made once and keeps in that store.
A follower checks milestones with them: chrysalis serve --no-coordinator --coordinator-public-key <hex> …

Options:
  --coordinator-key-file <f> Ed25519 seeds, one per line (hex or Base58), as serve reads them
  --data-dir <dir>           the LMDB store of a node (as given to serve)
  --database <url>           the PostgreSQL store of a node (or CHRYSALIS_DATABASE_URL)`,
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      options: { "coordinator-key-file": { type: "string" }, "data-dir": { type: "string" }, database: { type: "string" } },
      allowPositionals: true,
      strict: true,
    });
    if (positionals[0] !== "public-key" || positionals.length !== 1) throw new UsageError("the subcommand is public-key");
    const file = values["coordinator-key-file"];
    if (file !== undefined && (values["data-dir"] !== undefined || values.database !== undefined)) {
      throw new UsageError("--coordinator-key-file and a store cannot be used together: name one");
    }
    let seeds: Uint8Array[];
    if (file !== undefined) seeds = await loadCoordinatorKeys(file);
    else {
      const store = await openSharedStore({ dataDir: values["data-dir"], database: values.database });
      try {
        seeds = [
          await store.secret(COORDINATOR_KEY_SECRET, () => {
            throw new Error("this store holds no coordinator key: its node was given --coordinator-key-file, or never issued a milestone");
          }),
        ];
      } finally {
        await store.close();
      }
    }
    write(seeds.map((seed) => toHex(milestonePublicKey(seed))).sort().join("\n"));
  },
};
