// The miner's worker body as plain JavaScript, so one source runs from src (vitest), dist and bundles alike:
// Node evaluates it (`new Worker(source, { eval: true })`), browsers load it from a Blob URL or, under a
// Content-Security-Policy without `worker-src blob:`, from dist/pow/worker.js (the same text, written at build time).
import { KERNEL_LAYOUT } from "./kernel.js";
import { JS_KERNEL_SOURCE } from "./kernel-js-source.generated.js";

/**
 * Messages in: {type:"init", module?, control?: SharedArrayBuffer} once (no module: the JavaScript kernel), then
 * {type:"job", id, digest, target, start, chunk, index, workers} and {type:"stop", id} (without SharedArrayBuffer).
 * Messages out: {type:"ready", kernel: "wasm" | "js"} after init, {type:"found", id, nonce}, {type:"progress", id,
 * hashes} (without SharedArrayBuffer) and {type:"done", id}.
 * control: Int32 [0] = the job this worker may run (0 stops it); BigInt64 [1] = hashes tried in that job.
 * Worker w searches the chunks w, w + workers, w + 2·workers … of `chunk` nonces each, counted from start rounded
 * down to a chunk, and stops between chunks (≤ ~20 ms) when told to.
 *
 * Node's eval'd workers run as CommonJS or, under `--input-type=module`, as an ES module; neither has `self`, and only
 * the first has `require`, so the port comes from process.getBuiltinModule or, before Node 20.16, a dynamic import,
 * which both have. Messages posted before the import resolves wait in the port. Without SharedArrayBuffer (a page that
 * is not cross-origin isolated) a stop arrives as a message, so the loop yields between chunks through a
 * MessageChannel: a task without the ≥ 4 ms clamp browsers put on nested timers, which cost a quarter of the hash rate.
 */
export const WORKER_SOURCE = `"use strict";
${JS_KERNEL_SOURCE}
const MAX = (1n << 64n) - 1n;
const web = typeof WorkerGlobalScope === "function" && self instanceof WorkerGlobalScope;
let send;
let kernel, control, hashes;
let stopped = 0;
let channel, wake;

function yieldNow() {
  if (channel === undefined) {
    channel = new MessageChannel();
    channel.port1.onmessage = () => wake();
  }
  return new Promise((resolve) => {
    wake = resolve;
    channel.port2.postMessage(0);
  });
}

function wasmKernel(module) {
  const exports = new WebAssembly.Instance(module, {}).exports;
  const bytes = new Uint8Array(exports.memory.buffer);
  const view = new DataView(exports.memory.buffer);
  return {
    setDigest(digest) {
      bytes.set(digest, ${KERNEL_LAYOUT.digest});
      exports.setDigest();
    },
    search(target, first, last) {
      return exports.search(target, first, last) === 1 ? view.getBigUint64(${KERNEL_LAYOUT.result}, true) : -1n;
    },
  };
}

function onMessage(message) {
  if (message.type === "init") {
    let kind = "js";
    kernel = undefined;
    if (message.module !== undefined) {
      // A module the page compiled may still be refused here (a worker script served with a stricter policy).
      try {
        kernel = wasmKernel(message.module);
        kind = "wasm";
      } catch (error) {
        if (!(error instanceof WebAssembly.CompileError) && !(error instanceof EvalError)) throw error;
      }
    }
    kernel ??= createJsKernel();
    if (message.control) {
      control = new Int32Array(message.control, 0, 2);
      hashes = new BigInt64Array(message.control, 8, 1);
    }
    send({ type: "ready", kernel: kind });
  } else if (message.type === "job") {
    run(message).catch((error) => { setTimeout(() => { throw error; }); });
  } else if (message.type === "stop") {
    stopped = message.id;
  }
}

function active(id) {
  return control ? Atomics.load(control, 0) === id : stopped !== id;
}

async function run(job) {
  const id = job.id;
  kernel.setDigest(job.digest);
  const chunk = job.chunk;
  let first = (job.start / chunk) * chunk + BigInt(job.index) * chunk;
  const step = BigInt(job.workers) * chunk;
  let tried = 0n;
  while (active(id) && first <= MAX) {
    const from = first < job.start ? job.start : first;
    const last = first + chunk - 1n > MAX ? MAX : first + chunk - 1n;
    const nonce = kernel.search(job.target, from, last);
    const found = nonce >= 0n;
    tried += (found ? nonce : last) - from + 1n;
    if (control) Atomics.store(hashes, 0, tried);
    else send({ type: "progress", id, hashes: Number(tried) });
    if (found) {
      send({ type: "found", id, nonce });
      break;
    }
    first += step;
    if (!control) await yieldNow();
  }
  send({ type: "done", id });
}

// Loaded anywhere but in a worker (a page's <script>, an import in Node's main thread) there is no port to listen on:
// say how the file is meant to be loaded, at once, instead of failing later on a missing port.
const LOAD_IT = "load it with new Worker(url) (in browsers, or pass its URL to createMiner({ workerUrl }) from chrysalis-core/pow; in Node, new Worker(url) from node:worker_threads), not as a page script or an import; the miner of chrysalis-core/pow starts it by itself";

function attach(threads) {
  if (threads.parentPort === null) throw new Error("chrysalis-core/pow/worker.js runs only inside a worker and was loaded in Node's main thread: " + LOAD_IT);
  const port = threads.parentPort;
  send = (message) => port.postMessage(message);
  port.on("message", onMessage);
}

if (web) {
  send = (message) => self.postMessage(message);
  self.onmessage = (event) => onMessage(event.data);
} else if (typeof process !== "object" || process === null || typeof process.versions?.node !== "string") {
  throw new Error("chrysalis-core/pow/worker.js is a worker script and was loaded outside a worker: " + LOAD_IT);
} else if (typeof process.getBuiltinModule === "function") {
  // Synchronously (Node ≥ 20.16), so an import in the main thread rejects with attach's error.
  attach(process.getBuiltinModule("node:worker_threads"));
} else {
  // Older Node: only the dynamic import reaches the module here; in the main thread the error ends the process as
  // an unhandled rejection, which still names how to load the file.
  import("node:worker_threads").then(attach);
}
`;
