// The miner's worker body as plain JavaScript, so one source runs from src (vitest), dist and bundles alike:
// Node evaluates it (`new Worker(source, { eval: true })`), browsers load it from a Blob URL.
import { KERNEL_LAYOUT } from "./kernel.js";

/**
 * Messages in: {type:"init", module, control?: SharedArrayBuffer} once, then {type:"job", id, digest, target,
 * start, chunk, index, workers} and {type:"stop", id} (browsers without SharedArrayBuffer).
 * Messages out: {type:"ready"} after init, {type:"found", id, nonce}, {type:"progress", id, hashes} (no
 * SharedArrayBuffer) and {type:"done", id}.
 * control: Int32 [0] = the job this worker may run (0 stops it); BigInt64 [1] = hashes tried in that job.
 * Worker w searches the chunks w, w + workers, w + 2·workers … of `chunk` nonces each, counted from start rounded
 * down to a chunk, and stops between chunks (≤ ~20 ms) when told to.
 */
export const WORKER_SOURCE = `"use strict";
const node = typeof require === "function" && typeof process === "object";
const port = node ? require("node:worker_threads").parentPort : self;
const send = (message) => port.postMessage(message);
const MAX = (1n << 64n) - 1n;
let kernel, bytes, view, control, hashes;
let stopped = 0;
const yieldNow = () => new Promise((resolve) => setTimeout(resolve, 0));

function onMessage(message) {
  if (message.type === "init") {
    kernel = new WebAssembly.Instance(message.module, {}).exports;
    bytes = new Uint8Array(kernel.memory.buffer);
    view = new DataView(kernel.memory.buffer);
    if (message.control) {
      control = new Int32Array(message.control, 0, 2);
      hashes = new BigInt64Array(message.control, 8, 1);
    }
    send({ type: "ready" });
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
  bytes.set(job.digest, ${KERNEL_LAYOUT.digest});
  kernel.setDigest();
  const chunk = job.chunk;
  let first = (job.start / chunk) * chunk + BigInt(job.index) * chunk;
  const step = BigInt(job.workers) * chunk;
  let tried = 0n;
  while (active(id) && first <= MAX) {
    const from = first < job.start ? job.start : first;
    const last = first + chunk - 1n > MAX ? MAX : first + chunk - 1n;
    const found = kernel.search(job.target, from, last) === 1;
    const nonce = found ? view.getBigUint64(${KERNEL_LAYOUT.result}, true) : 0n;
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

if (node) port.on("message", onMessage);
else self.onmessage = (event) => onMessage(event.data);
`;
