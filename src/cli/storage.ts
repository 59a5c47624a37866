// The store tools of `chrysalis`, working beside a running node on its store (as `auth revoke` does):
// `snapshot create` (a consistent snapshot file, written whole or not at all) and `db stats | verify | compact`.
import { open, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { parseArgs } from "node:util";
import { encodeSnapshot, LmdbStore, type StoreStats } from "../node/index.js";
import type { Command } from "./commands.js";
import { UsageError, write } from "./io.js";
import { openSharedStore } from "./setup.js";

const STORE_OPTIONS = { "data-dir": { type: "string" }, database: { type: "string" } } as const;

/** The store the tool works on: the one helper (openSharedStore) behind every command naming --data-dir/--database. */
async function withStore<T>(values: { "data-dir"?: string | undefined; database?: string | undefined }, work: (store: Awaited<ReturnType<typeof openSharedStore>>) => Promise<T>): Promise<T> {
  const store = await openSharedStore({ dataDir: values["data-dir"], database: values.database });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

const seconds = (started: number): string => `${((performance.now() - started) / 1000).toFixed(2)} s`;

/**
 * Writes `bytes` to `file` so that the name only ever holds a whole file: written to <file>.tmp, flushed to disk,
 * renamed over the name, and the directory flushed so that the rename itself survives a power loss. A kill at any point
 * leaves at most a stray <file>.tmp (written over by the next run), never half a file under the name.
 */
export async function writeFileAtomically(file: string, bytes: Uint8Array): Promise<void> {
  const temporary = `${file}.tmp`;
  try {
    // A stray one from a killed run is removed, and the new one created exclusively ("wx"): a link planted under the
    // temporary name in a shared directory is never followed.
    await rm(temporary, { force: true });
    const handle = await open(temporary, "wx", 0o600);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(`cannot write ${JSON.stringify(file)}: ${code ?? (error as Error).message}`, { cause: error });
  }
  // Directories cannot be opened for fsync everywhere (Windows): there the rename is as durable as the platform makes it.
  const directory = await open(dirname(file), "r").catch(() => undefined);
  if (directory !== undefined) {
    await directory.sync().catch(() => undefined);
    await directory.close();
  }
}

export const snapshotCommand: Command = {
  summary: "create: write a snapshot of a store (ledger, latest milestone, entry points) while its node serves",
  usage: `chrysalis snapshot create <file> (--data-dir <dir> | --database <postgres://…>)

Reads the store a node uses (the same option as given to serve; CHRYSALIS_DATABASE_URL when neither) in one
consistent read transaction, while the node goes on serving, and writes the snapshot to <file>: the network,
the unspent outputs, the latest milestone (index, id, timestamp), the coordinator's public keys and the solid
entry points (the ids new messages may reference). The format is versioned, binary and checksummed (docs/SNAPSHOT.md).
The file is written to <file>.tmp and renamed once it is on disk: <file> is never half written.

Start a new node from it with: chrysalis serve --snapshot <file> (--data-dir <new dir> | --database <empty db>)
and the same --coordinator-key-file; this is also the way from LMDB to PostgreSQL and back.`,
  async run(args) {
    const { values, positionals } = parseArgs({ args, options: STORE_OPTIONS, allowPositionals: true, strict: true });
    const [action, file, extra] = positionals;
    if (action !== "create") throw new UsageError(action === undefined ? "snapshot needs an action: create" : `unknown snapshot action "${action}": use create`);
    if (file === undefined || extra !== undefined) throw new UsageError("snapshot create takes exactly one file");
    const started = performance.now();
    const snapshot = await withStore(values, (store) => store.readSnapshot());
    const bytes = encodeSnapshot(snapshot);
    await writeFileAtomically(file, bytes);
    const milestone = snapshot.milestone === undefined ? "no milestone yet" : `milestone ${snapshot.milestone.index}`;
    write(`snapshot of ${snapshot.network} at ${milestone}: ${snapshot.outputs.length} unspent outputs, ${snapshot.entryPoints.length} entry points, ${bytes.length} bytes written to ${file} in ${seconds(started)}`);
  },
};

/** The fields of `db stats --json`, in this order. */
function statsJson(stats: StoreStats): Record<string, string | number> {
  return {
    engine: stats.engine,
    network: stats.network,
    messages: stats.messages,
    unspentOutputs: stats.unspentOutputs,
    latestMilestoneIndex: stats.latestMilestoneIndex,
    pruningIndex: stats.pruningIndex,
    bytes: stats.bytes,
    fileBytes: stats.fileBytes,
  };
}

export const dbCommand: Command = {
  summary: "stats | verify | compact: count, check or shrink a node's store",
  usage: `chrysalis db stats (--data-dir <dir> | --database <postgres://…>) [--json]
chrysalis db verify (--data-dir <dir> | --database <postgres://…>)
chrysalis db compact --data-dir <dir>

The store is the one a node uses, named as to serve (CHRYSALIS_DATABASE_URL when neither option is given);
stats and verify work while the node serves.
  stats     messages, unspent outputs, latest milestone and pruning index, and the bytes the data takes
            (fileBytes: on disk, free pages included); --json prints one JSON object with engine, network,
            messages, unspentOutputs, latestMilestoneIndex, pruningIndex, bytes and fileBytes
  verify    checks the whole store in one read transaction: every message hashes to its id; metadata,
            children, index and tip entries point to stored messages; balances equal their unspent outputs,
            which sum to the total supply on a ledger store. Exit 0 with "consistent: …", or exit 1 with
            one line naming the first inconsistency
  compact   rewrites an LMDB store without its free pages (its file never shrinks on its own) while no node
            has it open; PostgreSQL reclaims space with VACUUM instead`,
  async run(args) {
    const { values, positionals } = parseArgs({ args, options: { ...STORE_OPTIONS, json: { type: "boolean", default: false } }, allowPositionals: true, strict: true });
    const [action, extra] = positionals;
    if (action === undefined) throw new UsageError("db needs an action: stats, verify or compact");
    if (extra !== undefined) throw new UsageError(`db ${action} takes no argument besides its options`);
    if (values.json && action !== "stats") throw new UsageError("--json goes with db stats");
    if (action === "stats") {
      const stats = await withStore(values, (store) => store.stats());
      const fields = statsJson(stats);
      if (values.json) write(JSON.stringify(fields));
      else write(Object.entries(fields).map(([k, v]) => `${k.padEnd(20)} ${v}`).join("\n"));
      return;
    }
    if (action === "verify") {
      const started = performance.now();
      const result = await withStore(values, async (store) => {
        const problem = await store.verify();
        return problem === undefined ? { stats: await store.stats() } : { problem };
      });
      if ("problem" in result) throw new Error(`inconsistent: ${result.problem}`);
      const { stats } = result;
      write(`consistent: ${stats.engine} store of ${stats.network}, ${stats.messages} messages, ${stats.unspentOutputs} unspent outputs, milestone ${stats.latestMilestoneIndex} (pruned to ${stats.pruningIndex}), checked in ${seconds(started)}`);
      return;
    }
    if (action === "compact") {
      const database = values["data-dir"] !== undefined ? undefined : (values.database ?? process.env.CHRYSALIS_DATABASE_URL);
      if (database !== undefined && database !== "") {
        throw new UsageError("db compact is for LMDB (--data-dir): PostgreSQL reclaims its space itself with VACUUM (VACUUM FULL to shrink its files)");
      }
      if (values["data-dir"] === undefined) throw new UsageError("db compact needs --data-dir <dir>");
      const started = performance.now();
      const { before, after } = await withStore(values, (store) => {
        if (!(store instanceof LmdbStore)) throw new UsageError("db compact is for LMDB (--data-dir)");
        return store.compact();
      });
      write(`compacted ${values["data-dir"]}: ${before} → ${after} bytes on disk in ${seconds(started)}`);
      return;
    }
    throw new UsageError(`unknown db action "${action}": use stats, verify or compact`);
  },
};
