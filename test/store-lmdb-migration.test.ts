// The embedded engine's migration keeps its memory bounded: of a schema-1 store it reads the metadata records (02) in
// chunks and writes each chunk (into the messages' records, and its 11/12 entries) before reading on, never holding one
// key per message of the store; of a schema-3 store it reads the outputs (07) and spent records (08) it rolls back in
// chunks the same way. Observed by wrapping lmdb-js's open (the store's environment, not a copy): how many metadata
// records were read whose entry was not written yet, at most, and how many records one range read of 07 or 08 gave.
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { LmdbStore, ZERO_MESSAGE_ID } from "../src/node/index.js";
import { encodeOutput, encodeSpent } from "../src/node/store/records.js";
import { asSchema3, indexation, NETWORK, splitMessageRecords, tempDir, wallet } from "./store-helpers.js";

const watch = vi.hoisted(() => ({ on: false, read: 0, written: 0, outstanding: 0, ledger: new Map<number, { reads: number; records: number; largest: number }>() }));

vi.mock("lmdb", async (importOriginal) => {
  const lmdb = await importOriginal<typeof import("lmdb")>();
  const open = ((...args: Parameters<typeof lmdb.open>) => {
    const db = lmdb.open(...args) as unknown as {
      getRange(options: { start?: unknown }): Iterable<unknown>;
      putSync(key: unknown, ...rest: unknown[]): unknown;
    };
    const getRange = db.getRange.bind(db);
    const putSync = db.putSync.bind(db);
    db.getRange = (options) => {
      const range = getRange(options);
      const start = options.start;
      if (watch.on && start instanceof Uint8Array && (start[0] === 0x07 || start[0] === 0x08)) {
        const seen = watch.ledger.get(start[0]) ?? { reads: 0, records: 0, largest: 0 };
        watch.ledger.set(start[0], seen);
        seen.reads++;
        return {
          *[Symbol.iterator]() {
            let records = 0;
            for (const entry of range) {
              seen.records++;
              seen.largest = Math.max(seen.largest, ++records);
              yield entry;
            }
          },
        };
      }
      if (!watch.on || !(start instanceof Uint8Array) || start[0] !== 0x02) return range;
      return {
        *[Symbol.iterator]() {
          for (const entry of range) {
            watch.read++;
            watch.outstanding = Math.max(watch.outstanding, watch.read - watch.written);
            yield entry;
          }
        },
      };
    };
    db.putSync = (key, ...rest) => {
      if (watch.on && key instanceof Uint8Array && (key[0] === 0x11 || key[0] === 0x12)) watch.written++;
      return putSync(key, ...rest);
    };
    return db;
  }) as typeof lmdb.open;
  return { ...lmdb, open, default: { ...(lmdb as { default?: object }).default, open } };
});

const dirs = tempDir("lmdb-migration");
afterAll(() => dirs.remove());

/** The store at `path`, opened (and so migrated) while the reads and writes are watched. */
async function openWatched(path: string): Promise<LmdbStore> {
  watch.on = true;
  const store = new LmdbStore(path);
  try {
    await store.open({ network: NETWORK });
  } finally {
    watch.on = false;
  }
  return store;
}

describe("the migration of a schema-1 LMDB store", () => {
  it("writes the entries of 12,000 metadata records in bounded chunks (at most 4096 read ahead), all of them", async () => {
    const path = join(dirs.path, "store");
    const store = new LmdbStore(path);
    await store.open({ network: NETWORK });
    const first = indexation([ZERO_MESSAGE_ID], "first");
    await store.accept(first);
    await store.close();

    // Schema 1 as the previous version wrote it (metadata apart from the messages), with 12,000 more messages whose
    // bytes are the first one's (the migration reads only the metadata and the bytes it joins them to).
    const { open } = await import("lmdb");
    const db = open<Buffer, Buffer>({ path, keyEncoding: "binary", encoding: "binary" });
    const meta = (name: string): Buffer => Buffer.concat([Buffer.from([0]), Buffer.from(name)]);
    const ids: Buffer[] = [];
    const metadata = await db.transaction(() => {
      asSchema3(db);
      for (const p of [0x11, 0x12, 0x13]) for (const k of [...db.getKeys({ start: Buffer.from([p]), end: Buffer.from([p + 1]) })]) db.removeSync(Buffer.from(k));
      db.removeSync(meta("pruning"));
      db.putSync(meta("schema"), Buffer.from([0, 0, 0, 1]));
      splitMessageRecords(db);
      return Buffer.from(db.get(Buffer.concat([Buffer.from([0x02]), Buffer.from(first.id, "hex")]))!);
    });
    await db.transaction(() => {
      for (let i = 0; i < 12_000; i++) {
        const id = Buffer.alloc(32);
        id.writeUInt32BE(i, 0);
        id.fill(0xab, 4);
        const value = Buffer.from(metadata);
        value.writeBigUInt64BE(BigInt(1_000_000 + i), 0);
        db.putSync(Buffer.concat([Buffer.from([0x02]), id]), value);
        db.putSync(Buffer.concat([Buffer.from([0x01]), id]), Buffer.from(first.bytes));
        ids.push(id);
      }
    });

    // A metadata record of the wrong size in the last chunk read: the whole migration rolls back, the chunks before it
    // included.
    const wrong = Buffer.concat([Buffer.from([0x02]), Buffer.alloc(32, 0xff)]);
    await db.put(wrong, Buffer.alloc(34));
    await db.put(Buffer.concat([Buffer.from([0x01]), Buffer.alloc(32, 0xff)]), Buffer.from(first.bytes));
    await db.close();
    const refused = new LmdbStore(path);
    await expect(refused.open({ network: NETWORK })).rejects.toMatchObject({ code: "STORE_CORRUPT" });
    await refused.close();
    const untouched = open<Buffer, Buffer>({ path, keyEncoding: "binary", encoding: "binary" });
    try {
      expect(untouched.get(meta("schema"))).toEqual(Buffer.from([0, 0, 0, 1]));
      expect(untouched.getKeysCount({ start: Buffer.from([0x02]), end: Buffer.from([0x03]) })).toBe(12_002);
      expect(untouched.getKeysCount({ start: Buffer.from([0x11]), end: Buffer.from([0x13]) })).toBe(0);
      expect(untouched.get(Buffer.concat([Buffer.from([0x01]), ids[0]!]))).toEqual(Buffer.from(first.bytes));
      await untouched.remove(wrong);
      await untouched.remove(Buffer.concat([Buffer.from([0x01]), Buffer.alloc(32, 0xff)]));
    } finally {
      await untouched.close();
    }

    await (await openWatched(path)).close();
    expect(watch.read).toBe(12_001);
    expect(watch.written).toBe(12_001);
    expect(watch.outstanding).toBeLessThanOrEqual(4096);

    const check = open<Buffer, Buffer>({ path, keyEncoding: "binary", encoding: "binary" });
    try {
      expect(check.get(meta("schema"))).toEqual(Buffer.from([0, 0, 0, 4]));
      expect([...check.getKeys({ start: Buffer.from([0x02]), end: Buffer.from([0x03]) })]).toHaveLength(0);
      // Each message's record is now its metadata, then its bytes.
      const record = check.get(Buffer.concat([Buffer.from([0x01]), ids[11_999]!]))!;
      expect(record.subarray(0, 8).readBigUInt64BE(0)).toBe(BigInt(1_000_000 + 11_999));
      expect(record.subarray(35)).toEqual(Buffer.from(first.bytes));
      const unreferenced = [...check.getKeys({ start: Buffer.from([0x11]), end: Buffer.from([0x12]) })].map((k) => Buffer.from(k));
      expect(unreferenced).toHaveLength(12_001);
      // Each fake record under its own seq, in seq order after the real message.
      expect(unreferenced.slice(1).map((k) => k.subarray(9).toString("hex"))).toEqual(ids.map((id) => id.toString("hex")));
      expect(unreferenced.slice(1).map((k) => Number(k.readBigUInt64BE(1)))).toEqual(ids.map((_, i) => 1_000_000 + i));
    } finally {
      await check.close();
    }
  });
});

describe("the migration of a schema-3 LMDB store", () => {
  it("rolls back 5,000 unbooked outputs (into pending outputs) and 5,000 unconfirmed spends (into claims) in bounded chunks (at most 4096 records a read), all of them", async () => {
    const path = join(dirs.path, "schema-3");
    const made = new LmdbStore(path);
    await made.open({ network: NETWORK });
    await made.close();
    // Outputs and spends as schema 3 left them at acceptance, written by hand (no message carries them: the migration
    // reads the ledger's records only): 5,000 outputs to `pending` no milestone booked, and 5,000 outputs to `spender`
    // booked at genesis (milestone 0) and spent by transactions no milestone confirmed.
    const pending = wallet().address;
    const spender = wallet().address;
    const count = 5000;
    const { open } = await import("lmdb");
    const db = open<Buffer, Buffer>({ path, keyEncoding: "binary", encoding: "binary" });
    const key = (prefix: number, ...parts: Uint8Array[]): Buffer => Buffer.concat([Buffer.from([prefix]), ...parts]);
    const u64 = (n: number): Buffer => {
      const out = Buffer.alloc(8);
      out.writeBigUInt64BE(BigInt(n));
      return out;
    };
    const balance = (amount: number): Buffer => Buffer.concat([u64(amount), u64(0), Buffer.alloc(4)]);
    const outputId = (tag: number, i: number): Buffer => {
      const id = Buffer.alloc(34, tag);
      id.writeUInt32BE(i, 0);
      return id;
    };
    await db.transaction(() => {
      asSchema3(db);
      // Output seqs as schema 3 gave them (message seq × 128 + index), below the next seq's.
      db.putSync(key(0, Buffer.from("seq")), u64(1000));
      const message = Buffer.alloc(32, 0xcd);
      for (let i = 0; i < count; i++) {
        const unbooked = outputId(0x01, i);
        db.putSync(key(0x07, unbooked), Buffer.from(encodeOutput({ messageId: message, seq: 2 * i, milestoneIndexBooked: undefined, output: { type: 0, address: { type: 0, address: pending }, amount: 1_000_000 } })));
        db.putSync(key(0x09, pending, u64(2 * i), unbooked), Buffer.from([0]));
        const spent = outputId(0x02, i);
        db.putSync(key(0x07, spent), Buffer.from(encodeOutput({ messageId: Buffer.alloc(32), seq: 2 * i + 1, milestoneIndexBooked: 0, output: { type: 0, address: { type: 0, address: spender }, amount: 1_000_000 } })));
        db.putSync(key(0x08, spent), Buffer.from(encodeSpent(Buffer.alloc(32, i % 251), message, undefined)));
        db.putSync(key(0x0a, spender, u64(2 * i + 1), spent), Buffer.from([0]));
      }
      db.putSync(key(0x0b, pending), balance(count * 1_000_000));
    });
    await db.close();

    const migrated = await openWatched(path);
    // Every record of both ranges read, a chunk at a time.
    expect(watch.ledger.get(0x07)).toMatchObject({ records: 2 * count });
    expect(watch.ledger.get(0x08)).toMatchObject({ records: count });
    for (const [, seen] of watch.ledger) {
      expect(seen.largest).toBeLessThanOrEqual(4096);
      expect(seen.reads).toBeGreaterThanOrEqual(2);
    }
    expect(await migrated.addressBalance(pending)).toEqual({ balance: 0, dustAllowance: 0, dustOutputs: 0 });
    expect(await migrated.addressOutputs(pending, { max: 10, includeSpent: true })).toEqual([]);
    expect(await migrated.addressBalance(spender)).toEqual({ balance: count * 1_000_000, dustAllowance: 0, dustOutputs: 0 });
    expect(await migrated.addressOutputs(spender, { max: 2 * count, includeSpent: true })).toHaveLength(count);
    for (const i of [0, 4095, 4096, count - 1]) {
      expect(await migrated.output(outputId(0x01, i).toString("hex"))).toBeUndefined();
      expect((await migrated.output(outputId(0x02, i).toString("hex")))?.spent).toBeUndefined();
      expect(await migrated.claim(outputId(0x02, i).toString("hex"))).toEqual({ transactionId: Buffer.alloc(32, i % 251).toString("hex"), messageId: "cd".repeat(32), index: 0 });
      const unbooked = outputId(0x01, i);
      expect(await migrated.pendingOutput(unbooked.toString("hex"))).toEqual({
        outputId: unbooked.toString("hex"),
        transactionId: unbooked.subarray(0, 32).toString("hex"),
        messageId: "cd".repeat(32),
        output: { type: 0, address: { type: 0, address: pending }, amount: 1_000_000 },
        index: 0,
      });
    }
    expect(await migrated.stats()).toMatchObject({ unspentOutputs: count });
    expect(await migrated.verify()).toBeUndefined();
    await migrated.close();
  });
});
