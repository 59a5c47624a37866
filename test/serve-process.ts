// `chrysalis serve` as a child process, as an operator runs it (`node dist/cli/main.js serve …`, built by npm test):
// started on 127.0.0.1 with an ephemeral port read from its "listening on" line, and killed by the test that started
// it (`killAll` in afterAll catches any a failing test left running).
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
/** The CLI under test: dist/cli/main.js (built by npm test), or CHRYSALIS_TEST_CLI (a build of its own elsewhere). */
export const CLI = process.env.CHRYSALIS_TEST_CLI ?? join(root, "dist/cli/main.js");

export interface ServeProcess {
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** Everything it printed so far (stdout and stderr), and each stream alone. */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>;
  /** Milliseconds from spawn to its "listening on" line. */
  readonly startMs: number;
  /** SIGKILL, and waits for the exit. */
  kill(): Promise<void>;
  /** SIGTERM (graceful), and waits for the exit code; rejects (after a SIGKILL) if the process outlives `withinMs`. */
  stop(withinMs?: number): Promise<number | null>;
}

const running = new Set<ChildProcess>();

/** Starts `serve` with `args` (storage, genesis, …) on 127.0.0.1:0; rejects with its output if it exits first. */
export function startServe(args: readonly string[], env: Record<string, string> = {}, timeoutMs = 30_000): Promise<ServeProcess> {
  const started = performance.now();
  // Gossip listens on a free port unless the test says otherwise (serve's default, 15600, is one port for all).
  const p2p = args.some((a) => a === "--p2p-bind" || a === "--no-p2p" || a === "--upstream") ? [] : ["--p2p-bind", "/ip4/127.0.0.1/tcp/0"];
  const child = spawn(process.execPath, [CLI, "serve", "--host", "127.0.0.1", "--port", "0", ...p2p, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  running.add(child);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => {
    running.delete(child);
    resolve(code);
  }));
  let out = "";
  let stdout = "";
  let stderr = "";
  return new Promise<ServeProcess>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`serve did not listen within ${timeoutMs} ms: ${out}`));
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      stdout += chunk.toString();
      const m = /listening on (http:\/\/[^ \s]+)/.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        const startMs = performance.now() - started;
        resolve({
          url: m[1]!,
          port: Number(new URL(m[1]!).port),
          child,
          startMs,
          output: () => out,
          stdout: () => stdout,
          stderr: () => stderr,
          exited,
          async kill() {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
            await exited;
          },
          async stop(withinMs = 20_000) {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
            let timer: NodeJS.Timeout | undefined;
            const late = new Promise<never>((_, fail) => {
              timer = setTimeout(() => {
                child.kill("SIGKILL");
                fail(new Error(`serve did not stop within ${withinMs} ms of SIGTERM: ${out.slice(-2000)}`));
              }, withinMs);
            });
            try {
              return await Promise.race([exited, late]);
            } finally {
              clearTimeout(timer);
            }
          },
        });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      stderr += chunk.toString();
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}) before listening: ${out}`));
    });
  });
}

/** What a CLI run ended with. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts `chrysalis <args>` (SIGKILL after `timeoutMs`, or by killAll): its pid, a kill, and its end. */
export function cliProcess(args: readonly string[], env: Record<string, string> = {}, timeoutMs = 60_000): { pid: number; kill(): void; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  running.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const done = new Promise<CliResult>((resolve) =>
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, signal, stdout, stderr });
    }),
  );
  return { pid: child.pid!, kill: () => child.kill("SIGKILL"), done };
}

/** Runs `chrysalis <args>` to its end (SIGKILL after `timeoutMs`). */
export function runCli(args: readonly string[], timeoutMs = 60_000): Promise<CliResult> {
  return cliProcess(args, {}, timeoutMs).done;
}

/** Runs `serve` expecting it to fail at start: its exit code and output. */
export function failingServe(args: readonly string[], env: Record<string, string> = {}, timeoutMs = 30_000): Promise<CliResult> {
  return cliProcess(["serve", "--host", "127.0.0.1", "--port", "0", ...args], env, timeoutMs).done;
}

/** SIGKILLs every serve process still running (for afterAll). */
export async function killAll(): Promise<void> {
  const waits = [...running].map((child) => new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  }));
  await Promise.all(waits);
}
