// `npm run build`, after tsc: writes dist/pow/worker.js, the PoW worker as a file of its own (the package exports it
// as chrysalis-core/pow/worker.js). Pages whose Content-Security-Policy forbids blob: workers serve it from their
// own origin and pass its URL as the miner's workerUrl; it is the same text the miner otherwise puts in a Blob.
import { writeFileSync } from "node:fs";

const { WORKER_SOURCE } = await import("../dist/pow/worker-source.js");
writeFileSync(
  new URL("../dist/pow/worker.js", import.meta.url),
  `// chrysalis-core PoW worker (generated from src/pow/worker-source.ts): load it with new Worker(url), or pass its URL\n// to createMiner({ workerUrl }). Self-contained: no imports.\n${WORKER_SOURCE}`,
);
