// The embedded engine's migration of a schema-1 store keeps its memory bounded: it reads the metadata records (02) in
// chunks and writes each chunk (into the messages' records, and its 11/12 entries) before reading on, never holding one
// key per message of the store. Observed by
// wrapping lmdb-js's open (the store's environment, not a copy): how many metadata records were read whose entry was
// not written yet, at most.
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { LmdbStore, ZERO_MESSAGE_ID } from "../src/node/index.js";
import { indexation, NETWORK, splitMessageRecords, tempDir } from "./store-helpers.js";

const watch = vi.hoisted(() => ({ on: false, read: 0, written: 0, outstanding: 0 }));

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

    watch.on = true;
    const migrated = new LmdbStore(path);
    try {
      await migrated.open({ network: NETWORK });
    } finally {
      watch.on = false;
    }
    await migrated.close();
    expect(watch.read).toBe(12_001);
    expect(watch.written).toBe(12_001);
    expect(watch.outstanding).toBeLessThanOrEqual(4096);

    const check = open<Buffer, Buffer>({ path, keyEncoding: "binary", encoding: "binary" });
    try {
      expect(check.get(meta("schema"))).toEqual(Buffer.from([0, 0, 0, 3]));
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
