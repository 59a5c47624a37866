// `npm run docs`: the API reference, built by TypeDoc into docs/api/ (git-ignored, never committed) from the sources
// of every entry point package.json exports, so a new entry point is documented the day it is exported.
import { readFileSync } from "node:fs";

const pkg = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8"));

/** src/…/x.ts for each export whose `types` is dist/…/x.d.ts (the worker file and package.json have no types). */
const entryPoints = Object.values(pkg.exports)
  .map((target) => (typeof target === "object" && target !== null ? target.types : undefined))
  .filter((types) => typeof types === "string")
  .map((types) => types.replace(/^\.\/dist\//, "src/").replace(/\.d\.ts$/, ".ts"));

/** @type {Partial<import("typedoc").TypeDocOptions>} */
export default {
  entryPoints,
  tsconfig: "tsconfig.json",
  out: "docs/api",
  readme: "README.md",
  // An exported name without a doc comment fails the build (typedoc's default kinds: enums and their members,
  // variables, functions, classes, interfaces, their properties, methods and accessors, type aliases).
  validation: { notExported: true, invalidLink: true, notDocumented: true },
  treatValidationWarningsAsErrors: true,
  // Referenced by public types but internal on purpose: the schema machinery the model's types are inferred from
  // (Model, Json and the wire-object declarations of objects.ts), and helpers whose shape a caller never names.
  intentionallyNotExported: [
    "src/model/schema.ts:Model",
    "src/model/schema.ts:Json",
    ...[
      "address",
      "ed25519Address",
      "ed25519Signature",
      "indexationPayload",
      "input",
      "message",
      "messagePayload",
      "migratedFundsEntry",
      "milestonePayload",
      "output",
      "receiptPayload",
      "referenceUnlockBlock",
      "sigLockedDustAllowanceOutput",
      "sigLockedSingleOutput",
      "signatureUnlockBlock",
      "transactionEssence",
      "transactionPayload",
      "treasuryInput",
      "treasuryOutput",
      "treasuryTransactionPayload",
      "unlockBlock",
      "utxoInput",
    ].map((name) => `src/model/objects.ts:${name}`),
    "src/bytes/errors.ts:ErrorCodeRegistry",
    "src/crypto/ed25519.ts:Ed25519Rules",
    "src/pow/kernel.ts:KernelExports",
    "src/node/errors.ts:NODE_ERROR_STATUS",
    "src/node/http/router.ts:Route",
    "src/node/edge/address.ts:ForwardedFor",
    "src/node/server.ts:UpgradeContext",
    // Parameter shapes the node's own parts satisfy (gossip's Gossip, the network part, the processor's callers): a
    // caller passes one but never has to name it.
    "src/node/edge/metrics.ts:GossipSource",
    "src/node/edge/metrics.ts:NetworkSource",
    "src/node/processor.ts:StoredSource",
  ],
  // Fields of the JSON types have no declaration to document (they are computed from the schema): see the plugin.
  plugin: ["./scripts/typedoc-derived-fields.mjs"],
  githubPages: false,
  logLevel: "Warn",
};
