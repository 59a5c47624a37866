// Gossip peers in processes of their own (test/gossip-peer.ts, bundled once per test file with esbuild, libp2p left
// to node_modules), driven over stdin/stdout JSON lines; every peer started is stopped by its test or by killAll.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { Config } from "./gossip-peer.js";

const root = fileURLToPath(new URL("..", import.meta.url));
export const NETWORK = "chrysalis-gossip-test";

/** What a test gives spawnPeer: the peer's config, mode (default "node"), network and seed (default random) optional. */
export type PeerConfig = Partial<Pick<Config, "mode" | "network" | "seed">> & Omit<Config, "mode" | "network" | "seed">;

export type PeerEvent = Record<string, unknown> & { event: string };

export interface PeerProcess {
  readonly peerId: string;
  readonly seed: string;
  /** The first listen address, with /p2p/<peerId>. */
  readonly address: string;
  readonly events: PeerEvent[];
  call<T = unknown>(cmd: string, ...args: unknown[]): Promise<T>;
  /** The first event (already seen or to come) matching, within the time. */
  waitFor(match: (event: PeerEvent) => boolean, timeoutMs: number, what: string): Promise<PeerEvent>;
  readonly exited: Promise<number | null>;
  output(): string;
  /** Asks the peer to stop (gossip.stop()) and waits for the exit; SIGKILL after 10 s. */
  stop(): Promise<void>;
  kill(): Promise<void>;
}

let bundled: Promise<string> | undefined;
const children = new Set<ChildProcess>();

function bundle(): Promise<string> {
  bundled ??= (async () => {
    const dir = join(root, "node_modules/.cache/chrysalis-gossip-tests");
    mkdirSync(dir, { recursive: true });
    const outfile = join(dir, `gossip-peer-${process.pid}.mjs`);
    await build({ entryPoints: [join(root, "test/gossip-peer.ts")], bundle: true, platform: "node", format: "esm", target: "node20", packages: "external", outfile, logLevel: "silent" });
    return outfile;
  })();
  return bundled;
}

export const randomSeed = (): string => randomBytes(32).toString("hex");

export async function spawnPeer(config: PeerConfig = {}, timeoutMs = 20_000): Promise<PeerProcess> {
  const script = await bundle();
  const seed = config.seed ?? randomSeed();
  const full = { mode: "node", network: NETWORK, ...config, seed };
  const child = spawn(process.execPath, [script, JSON.stringify(full)], { stdio: ["pipe", "pipe", "pipe"], cwd: root });
  children.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  const events: PeerEvent[] = [];
  const waiters = new Set<{ match: (e: PeerEvent) => boolean; resolve: (e: PeerEvent) => void }>();
  const replies = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let out = "";
  let buffer = "";
  let n = 0;
  child.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stdout!.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    buffer += chunk.toString();
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (typeof parsed.reply === "number") {
        const waiting = replies.get(parsed.reply);
        replies.delete(parsed.reply);
        if (parsed.error !== undefined) waiting?.reject(new Error(String(parsed.error)));
        else waiting?.resolve(parsed.result);
        continue;
      }
      const event = parsed as PeerEvent;
      events.push(event);
      for (const waiter of [...waiters]) {
        if (waiter.match(event)) {
          waiters.delete(waiter);
          waiter.resolve(event);
        }
      }
    }
  });
  void exited.then(() => {
    for (const { reject } of replies.values()) reject(new Error(`the peer exited: ${out.slice(-2000)}`));
    replies.clear();
  });

  const waitFor = (match: (event: PeerEvent) => boolean, ms: number, what: string): Promise<PeerEvent> => {
    const found = events.find(match);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise<PeerEvent>((resolve, reject) => {
      const waiter = {
        match,
        resolve: (e: PeerEvent) => {
          clearTimeout(timer);
          resolve(e);
        },
      };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new Error(`no ${what} within ${ms} ms; output: ${out.slice(-3000)}`));
      }, ms);
      waiters.add(waiter);
    });
  };

  const ready = await Promise.race([
    waitFor((e) => e.event === "ready", timeoutMs, "ready line"),
    exited.then((code) => {
      throw new Error(`the peer exited (${code}) before it was ready: ${out}`);
    }),
  ]);
  const addresses = ready.addresses as string[];
  const call = <T>(cmd: string, ...args: unknown[]): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = ++n;
      replies.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.stdin!.write(`${JSON.stringify({ n: id, cmd, args })}\n`);
    });
  const kill = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  };
  return {
    peerId: ready.peerId as string,
    seed,
    address: addresses[0]!,
    events,
    call,
    waitFor,
    exited,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await call("stop").catch(() => undefined);
      await exited;
      clearTimeout(timer);
    },
    kill,
  };
}

/** Kills every peer still running and removes this file's bundle (afterAll). */
export async function killAll(): Promise<void> {
  const script = bundled;
  bundled = undefined;
  const file = script === undefined ? "" : await script.catch(() => "");
  if (file !== "") rmSync(file, { force: true });
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once("exit", () => resolve());
          child.kill("SIGKILL");
        }),
    ),
  );
}

/** Polls `check` every 50 ms until it is truthy, at most `ms`. */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`not ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Bytes of a test message, as hex (opaque to gossip: it never decodes them). */
export const messageHex = (text: string): string => Buffer.from(`message:${text}`).toString("hex");
