// Group commit (src/node/store/grouped.ts): a write starts at once when no group is in flight; the writes that
// arrive while one is wait and start together when it settles, whatever way it settled; each caller gets its own
// write's outcome. The writes here are promises the test settles by hand, so every step is seen in order; the stores'
// redemptions through it are tested in store-lmdb-writes.test.ts and store-contract.test.ts (every engine).
import { describe, expect, it } from "vitest";
import { Grouped, eachOnItsOwn } from "../src/node/store/grouped.js";

interface Write {
  started: boolean;
  resolve(value: string): void;
  reject(error: Error): void;
  start(): Promise<string>;
}

function write(): Write {
  const w = { started: false } as Write;
  const settled = new Promise<string>((resolve, reject) => {
    w.resolve = resolve;
    w.reject = reject;
  });
  w.start = () => {
    w.started = true;
    return settled;
  };
  return w;
}

/** Lets every settled promise's reactions run. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("Grouped", () => {
  it("starts a write at once when nothing is in flight, and again once everything settled", async () => {
    const groups = new Grouped<() => Promise<string>, string>(eachOnItsOwn);
    const a = write();
    const pa = groups.run(() => a.start());
    expect(a.started).toBe(true);
    a.resolve("a");
    expect(await pa).toBe("a");
    await turn();
    const b = write();
    const pb = groups.run(() => b.start());
    expect(b.started).toBe(true);
    b.resolve("b");
    expect(await pb).toBe("b");
  });

  it("holds the writes that arrive while one is in flight, then starts them together as the next group", async () => {
    const groups = new Grouped<() => Promise<string>, string>(eachOnItsOwn);
    const [a, b, c, d] = [write(), write(), write(), write()];
    const pa = groups.run(() => a.start());
    const pb = groups.run(() => b.start());
    await turn();
    const pc = groups.run(() => c.start());
    await turn();
    expect([a.started, b.started, c.started]).toEqual([true, false, false]);
    a.resolve("a");
    await turn();
    // b and c started together, before either settled; d, arriving now, waits for both.
    expect([b.started, c.started]).toEqual([true, true]);
    const pd = groups.run(() => d.start());
    c.resolve("c");
    await turn();
    expect(d.started).toBe(false);
    b.resolve("b");
    await turn();
    expect(d.started).toBe(true);
    d.resolve("d");
    expect(await Promise.all([pa, pb, pc, pd])).toEqual(["a", "b", "c", "d"]);
  });

  it("a failed write fails its caller only, and the writes held behind it still start", async () => {
    const groups = new Grouped<() => Promise<string>, string>(eachOnItsOwn);
    const [a, b] = [write(), write()];
    const pa = groups.run(() => a.start());
    const pb = groups.run(() => b.start());
    a.reject(new Error("disk full"));
    await expect(pa).rejects.toThrow("disk full");
    await turn();
    expect(b.started).toBe(true);
    b.resolve("b");
    expect(await pb).toBe("b");
  });

  it("a write that throws as it starts rejects its caller and neither stops its group nor leaves the groups stuck", async () => {
    const groups = new Grouped<() => Promise<string>, string>(eachOnItsOwn);
    const [a, c, d] = [write(), write(), write()];
    const pa = groups.run(() => a.start());
    const pb = groups.run((): Promise<string> => {
      throw new Error("store closed");
    });
    const pc = groups.run(() => c.start());
    a.resolve("a");
    await turn();
    expect(c.started).toBe(true);
    c.resolve("c");
    await expect(pb).rejects.toThrow("store closed");
    expect(await Promise.all([pa, pc])).toEqual(["a", "c"]);
    await turn();
    const pd = groups.run(() => d.start());
    expect(d.started).toBe(true);
    d.resolve("d");
    expect(await pd).toBe("d");
  });

  it("a group written as one call: the writer sees the waiting items together, in order, and each caller its own outcome", async () => {
    const calls: string[][] = [];
    let release: (() => void) | undefined;
    const groups = new Grouped<string, number>(async (items) => {
      calls.push([...items]);
      if (calls.length === 1) await new Promise<void>((resolve) => (release = resolve));
      return items.map((item) => (item === "bad" ? { status: "rejected", reason: new Error(`refused ${item}`) } : { status: "fulfilled", value: item.length }));
    });
    const first = groups.run("a");
    const rest = [groups.run("bb"), groups.run("bad"), groups.run("dddd")];
    await turn();
    expect(calls).toEqual([["a"]]);
    release!();
    expect(await first).toBe(1);
    expect(await rest[0]).toBe(2);
    await expect(rest[1]).rejects.toThrow("refused bad");
    expect(await rest[2]).toBe(4);
    expect(calls).toEqual([["a"], ["bb", "bad", "dddd"]]);
  });

  it("a group call that fails, throws or answers with no or too few outcomes fails those callers, and the next group goes", async () => {
    let calls = 0;
    const groups = new Grouped<string, string>((items) => {
      calls++;
      if (calls === 1) throw new Error("database down");
      if (calls === 2) return Promise.reject(new Error("connection lost"));
      // A call that answers with no list, or a short one: its callers fail, and the groups go on.
      if (calls === 3) return Promise.resolve(undefined as unknown as PromiseSettledResult<string>[]);
      if (calls === 5) return Promise.resolve([{ status: "fulfilled", value: items[0]! }] as const);
      return Promise.resolve(items.map((value) => ({ status: "fulfilled", value }) as const));
    });
    const a = groups.run("a");
    const [b, c] = [groups.run("b"), groups.run("c")];
    await expect(a).rejects.toThrow("database down");
    await expect(b).rejects.toThrow("connection lost");
    await expect(c).rejects.toThrow("connection lost");
    await expect(groups.run("d")).rejects.toThrow("no outcome");
    const e = groups.run("e");
    const [f, g] = [groups.run("f"), groups.run("g")];
    expect(await e).toBe("e");
    expect(await f).toBe("f");
    await expect(g).rejects.toThrow("no outcome");
    expect(await groups.run("h")).toBe("h");
    expect(calls).toBe(6);
  });

  it("idle() resolves once no group is in flight and none waits: at once when idle, else after the last group settles", async () => {
    const groups = new Grouped<() => Promise<string>, string>(eachOnItsOwn);
    let idle = false;
    await groups.idle();
    expect(groups.busy).toBe(false);
    const [a, b] = [write(), write()];
    const pa = groups.run(() => a.start());
    const pb = groups.run(() => b.start()).catch((error: Error) => error.message);
    expect(groups.busy).toBe(true);
    void groups.idle().then(() => (idle = true));
    a.resolve("a");
    await turn();
    // The first group settled; the second (b) is in flight now.
    expect([idle, groups.busy, b.started]).toEqual([false, true, true]);
    b.reject(new Error("b failed"));
    await turn();
    expect([idle, groups.busy]).toEqual([true, false]);
    expect(await pa).toBe("a");
    expect(await pb).toBe("b failed");
  });
});
