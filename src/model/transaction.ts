// Building and signing a transaction payload, and checking the signature part of its semantic validation.
// What is signed (PROTOCOL.md §4): Ed25519 over the 32-byte BLAKE2b-256 of the serialized essence, once per signer.
import { copyBytes, equalBytes } from "../bytes/bytes.js";
import { ProtocolError } from "../bytes/errors.js";
import { fromHex, toHex } from "../bytes/hex.js";
import { ED25519_PUBLIC_KEY_LENGTH, ED25519_SEED_LENGTH, ED25519_SIGNATURE_LENGTH, TRANSACTION_ID_LENGTH } from "../bytes/limits.js";
import { ed25519Address } from "../crypto/address.js";
import { ed25519PublicKey, signEd25519, verifyEd25519 } from "../crypto/ed25519.js";
import { sortInputs, sortOutputs, validatePayload } from "./codec.js";
import { essenceHash } from "./ids.js";
import { unlockBlocksFor } from "./rules.js";
import type { IndexationPayload, Output, SignatureUnlockBlock, TransactionEssence, TransactionPayload, UnlockBlock, UtxoInput } from "./types.js";

/** Something that holds an Ed25519 key and signs essence hashes with it: a seed in memory, a hardware wallet, a remote service. */
export interface TransactionSigner {
  /** The 32-byte Ed25519 public key; BLAKE2b-256 of it is the address the input's output is locked to. */
  readonly publicKey: Uint8Array;
  /** Signs the 32-byte essence hash and returns the 64-byte signature. */
  sign(essenceHash: Uint8Array): Uint8Array;
}

/** The same, for signers that answer asynchronously (hardware wallets, remote key services). */
export interface AsyncTransactionSigner {
  /** The 32-byte Ed25519 public key; BLAKE2b-256 of it is the address the input's output is locked to. */
  readonly publicKey: Uint8Array;
  /** Signs the 32-byte essence hash and returns (or resolves to) the 64-byte signature. */
  sign(essenceHash: Uint8Array): Uint8Array | Promise<Uint8Array>;
}

/**
 * One input to spend and the key that unlocks it, given in one of three ways:
 * - `seed`: the 32-byte Ed25519 seed; the library signs;
 * - `signer`: an object with `publicKey` and `sign(essenceHash)`;
 * - `publicKey` alone: the options' `sign(publicKey, essenceHash)` hook signs.
 * Inputs with the same key get one signature unlock block; later ones reference it.
 */
export type InputToSign<S = TransactionSigner> = {
  /** 32 bytes, or 64 hex characters. */
  transactionId: Uint8Array | string;
  /** The index of the output in that transaction. */
  transactionOutputIndex: number;
} & (
  | {
      /** The 32-byte Ed25519 seed: the library signs. */
      seed: Uint8Array;
    }
  | {
      /** Signs for this input. */
      signer: S;
    }
  | {
      /** The 32-byte public key: the options' `sign` hook signs. */
      publicKey: Uint8Array;
    }
);

/** What buildTransactionPayload builds from: the inputs with their keys, the outputs, an optional indexation, a signing hook. */
export interface BuildTransactionOptions<S = TransactionSigner, R = Uint8Array> {
  /** The inputs in any order, each with the key that unlocks it; they are sorted canonically. */
  inputs: InputToSign<S>[];
  /** The outputs in any order; they are sorted canonically. */
  outputs: Output[];
  /** An optional indexation payload carried in the essence. */
  indexation?: IndexationPayload | undefined;
  /** Signs for inputs that name only a `publicKey`. */
  sign?: ((publicKey: Uint8Array, essenceHash: Uint8Array) => R) | undefined;
}

/** The inputs and outputs in canonical order, the essence, its hash, and one signing request per distinct key. */
interface Prepared {
  essence: TransactionEssence;
  hash: Uint8Array;
  /** For each sorted input, the position of the signer (in `signers`) that unlocks it. */
  signerOf: number[];
  signers: { publicKey: Uint8Array; sign: (hash: Uint8Array) => Uint8Array | Promise<Uint8Array> }[];
}

function checkKey(publicKey: unknown, path: string): Uint8Array {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== ED25519_PUBLIC_KEY_LENGTH) {
    throw new ProtocolError("INVALID_KEY", `expected a ${ED25519_PUBLIC_KEY_LENGTH}-byte Ed25519 public key`, { path });
  }
  return publicKey;
}

function prepare<S extends { publicKey: Uint8Array; sign(hash: Uint8Array): unknown }, R>(options: BuildTransactionOptions<S, R>): Prepared {
  if (typeof options !== "object" || options === null) throw new ProtocolError("INVALID_ARGUMENT", "expected the build options", { path: "" });
  const { inputs, outputs, indexation, sign } = options;
  if (!Array.isArray(inputs)) throw new ProtocolError("INVALID_ARGUMENT", "expected an array of inputs", { path: "inputs" });
  if (!Array.isArray(outputs)) throw new ProtocolError("INVALID_ARGUMENT", "expected an array of outputs", { path: "outputs" });

  const keyed: { input: UtxoInput; key: string; publicKey: Uint8Array; sign: (hash: Uint8Array) => Uint8Array | Promise<Uint8Array> }[] = [];
  for (let i = 0; i < inputs.length; i++) {
    const path = `inputs[${i}]`;
    const entry = inputs[i] as Record<string, unknown> | undefined;
    if (typeof entry !== "object" || entry === null) throw new ProtocolError("INVALID_ARGUMENT", "expected an input", { path });
    const rawId = entry["transactionId"];
    const transactionId = rawId instanceof Uint8Array ? rawId.slice() : fromHex(rawId, `${path}.transactionId`, TRANSACTION_ID_LENGTH);
    if (transactionId.length !== TRANSACTION_ID_LENGTH) throw new ProtocolError("LENGTH_OUT_OF_RANGE", `a transaction id is ${TRANSACTION_ID_LENGTH} bytes`, { path: `${path}.transactionId` });
    const index = entry["transactionOutputIndex"];
    if (typeof index !== "number") throw new ProtocolError("INVALID_ARGUMENT", "expected an output index", { path: `${path}.transactionOutputIndex` });
    const input: UtxoInput = { type: 0, transactionId, transactionOutputIndex: index };

    let publicKey: Uint8Array;
    let signWith: (hash: Uint8Array) => Uint8Array | Promise<Uint8Array>;
    if ("seed" in entry) {
      const seed = entry["seed"];
      if (!(seed instanceof Uint8Array) || seed.length !== ED25519_SEED_LENGTH) throw new ProtocolError("INVALID_KEY", `expected a ${ED25519_SEED_LENGTH}-byte Ed25519 seed`, { path: `${path}.seed` });
      publicKey = ed25519PublicKey(seed);
      signWith = (hash) => signEd25519(seed, hash);
    } else if ("signer" in entry) {
      const signer = entry["signer"] as S | undefined;
      if (typeof signer !== "object" || signer === null || typeof signer.sign !== "function") {
        throw new ProtocolError("INVALID_ARGUMENT", "expected a signer with publicKey and sign(essenceHash)", { path: `${path}.signer` });
      }
      publicKey = checkKey(signer.publicKey, `${path}.signer.publicKey`);
      signWith = (hash) => signer.sign(hash) as Uint8Array | Promise<Uint8Array>;
    } else {
      publicKey = checkKey(entry["publicKey"], `${path}.publicKey`);
      if (typeof sign !== "function") throw new ProtocolError("INVALID_ARGUMENT", "an input that names only a public key needs the sign(publicKey, essenceHash) option", { path: "sign" });
      const key = publicKey;
      signWith = (hash) => sign(key, hash) as Uint8Array | Promise<Uint8Array>;
    }
    keyed.push({ input, key: toHex(publicKey), publicKey, sign: signWith });
  }
  // Canonical order is the serialized form's; each element is encoded to find its place, so a bad one is named here.
  const byInput = new Map(keyed.map((k) => [k.input, k]));
  const sortedKeyed = sortInputs(keyed.map((k) => k.input)).map((input) => byInput.get(input)!);
  const essence: TransactionEssence = { type: 0, inputs: sortedKeyed.map((k) => k.input), outputs: sortOutputs(outputs) };
  if (indexation !== undefined) essence.payload = indexation;

  const signers: Prepared["signers"] = [];
  const seen = new Map<string, number>();
  const signerOf = sortedKeyed.map((k) => {
    let at = seen.get(k.key);
    if (at === undefined) {
      at = signers.length;
      seen.set(k.key, at);
      signers.push({ publicKey: k.publicKey, sign: k.sign });
    }
    return at;
  });
  // essenceHash encodes the essence, which runs every syntactic rule on inputs, outputs and indexation.
  return { essence, hash: essenceHash(essence), signerOf, signers };
}

function checkSignature(signature: unknown, publicKey: Uint8Array, hash: Uint8Array, signer: number): Uint8Array {
  const path = `signers[${signer}]`;
  if (!(signature instanceof Uint8Array) || signature.length !== ED25519_SIGNATURE_LENGTH) {
    throw new ProtocolError("INVALID_SIGNATURE", `the signer of key ${toHex(publicKey)} returned no ${ED25519_SIGNATURE_LENGTH}-byte signature`, { path });
  }
  // A hardware or remote signer can sign the wrong thing; a payload it spoils must not leave the library.
  if (!verifyEd25519(publicKey, hash, signature)) {
    throw new ProtocolError("INVALID_SIGNATURE", `the signature from key ${toHex(publicKey)} does not verify over the essence hash`, { path });
  }
  return copyBytes(signature);
}

function assemble(prepared: Prepared, signatures: Uint8Array[]): TransactionPayload {
  const unlockBlocks: UnlockBlock[] = unlockBlocksFor(prepared.signerOf, (signer): SignatureUnlockBlock => ({
    type: 0,
    signature: { type: 0, publicKey: prepared.signers[signer]!.publicKey.slice(), signature: signatures[signer]! },
  }));
  const payload: TransactionPayload = { type: 0, essence: prepared.essence, unlockBlocks };
  validatePayload(payload);
  return payload;
}

/**
 * Builds a signed transaction payload: sorts inputs and outputs canonically, signs BLAKE2b-256(essence) once per
 * distinct key, and writes reference unlock blocks for later inputs with the same key. Every signature is checked
 * before it is used, and the payload passes every syntactic rule. Signers must answer synchronously here;
 * see buildTransactionPayloadAsync for signers that return promises.
 */
export function buildTransactionPayload(options: BuildTransactionOptions<TransactionSigner, Uint8Array>): TransactionPayload {
  const prepared = prepare(options);
  const signatures = prepared.signers.map((s, i) => {
    const signature = s.sign(prepared.hash);
    if (signature instanceof Promise) throw new ProtocolError("INVALID_ARGUMENT", "this signer is asynchronous: use buildTransactionPayloadAsync", { path: `signers[${i}]` });
    return checkSignature(signature, s.publicKey, prepared.hash, i);
  });
  return assemble(prepared, signatures);
}

/** buildTransactionPayload for signers that answer with promises (asked one after another, as a device would be). */
export async function buildTransactionPayloadAsync(options: BuildTransactionOptions<AsyncTransactionSigner, Uint8Array | Promise<Uint8Array>>): Promise<TransactionPayload> {
  const prepared = prepare(options);
  const signatures: Uint8Array[] = [];
  for (let i = 0; i < prepared.signers.length; i++) {
    const s = prepared.signers[i]!;
    signatures.push(checkSignature(await s.sign(prepared.hash), s.publicKey, prepared.hash, i));
  }
  return assemble(prepared, signatures);
}

// -----------------------------------------------------------------------------------------------------------------

/** Why a transaction's signatures fail; paths are relative to the transaction payload (prefix "payload." in a message). */
export type SignatureCheckResult =
  | {
      /** The signatures are valid. */
      valid: true;
    }
  | {
      /** The signatures are not valid. */
      valid: false;
      /** The rule the transaction breaks. */
      code: "INPUT_NOT_FOUND" | "ADDRESS_MISMATCH" | "INVALID_SIGNATURE" | "INVALID_REFERENCE" | "INVALID_KEY" | "DUPLICATE" | "COUNT_OUT_OF_RANGE";
      /** The field concerned, relative to the transaction payload. */
      path: string;
      /** The input (and unlock block) position concerned. */
      index: number;
      /** What is wrong, in words. */
      message: string;
    };

function fail(code: Extract<SignatureCheckResult, { valid: false }>["code"], path: string, index: number, message: string): SignatureCheckResult {
  return { valid: false, code, path, index, message };
}

/**
 * The signature part of semantic validation (`PROTOCOL.md` §3). `addressOf(input, index)` returns the 32-byte Ed25519
 * address of the output the input consumes, or undefined when there is no such (unspent) output. Checks, in order:
 * one unlock block per input; each input's output is known; a signature unlock's BLAKE2b-256(publicKey) equals that
 * address, and no address has two signature blocks (later inputs of one address must reference); a reference points
 * back at a signature block of the same address; then every signature verifies (ZIP-215) over the essence hash.
 * Returns the first failure as { valid: false, code, path, index, message } and never throws on a bad signature;
 * it throws ProtocolError only when the payload is not a well-formed transaction model (its essence cannot be encoded,
 * or it is not a payload object at all). assertTransactionSignatures throws the failure instead.
 */
export function verifyTransactionSignatures(payload: TransactionPayload, addressOf: (input: UtxoInput, index: number) => Uint8Array | undefined): SignatureCheckResult {
  try {
    return checkSignatures(payload, addressOf);
  } catch (error) {
    // A model that is not a transaction payload at all (a missing field, a getter that throws) is bad input too.
    if (error instanceof ProtocolError) throw error;
    throw new ProtocolError("INVALID_ARGUMENT", "expected a transaction payload model", { path: "", cause: error });
  }
}

function checkSignatures(payload: TransactionPayload, addressOf: (input: UtxoInput, index: number) => Uint8Array | undefined): SignatureCheckResult {
  const { inputs } = payload.essence;
  const blocks = payload.unlockBlocks;
  if (blocks.length !== inputs.length) {
    return fail("COUNT_OUT_OF_RANGE", "unlockBlocks", Math.min(blocks.length, inputs.length), `${inputs.length} inputs need ${inputs.length} unlock blocks, got ${blocks.length}`);
  }
  const addresses = new Array<Uint8Array>(inputs.length);
  for (let i = 0; i < inputs.length; i++) {
    const address = addressOf(inputs[i]!, i);
    if (!(address instanceof Uint8Array)) return fail("INPUT_NOT_FOUND", `essence.inputs[${i}]`, i, "the output this input spends is unknown or spent");
    addresses[i] = address;
  }
  const signatureBlocks: number[] = [];
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i]!;
    if (block.type === 0) {
      const publicKey = block.signature.publicKey;
      if (!(publicKey instanceof Uint8Array) || publicKey.length !== ED25519_PUBLIC_KEY_LENGTH) {
        return fail("INVALID_KEY", `unlockBlocks[${i}].signature.publicKey`, i, "not a 32-byte public key");
      }
      if (!equalBytes(ed25519Address(publicKey), addresses[i]!)) {
        return fail("ADDRESS_MISMATCH", `unlockBlocks[${i}].signature.publicKey`, i, "BLAKE2b-256 of the public key is not the address of the consumed output");
      }
      for (const earlier of signatureBlocks) {
        if (equalBytes(addresses[earlier]!, addresses[i]!)) {
          return fail("DUPLICATE", `unlockBlocks[${i}]`, i, `input ${earlier} already signs for this address; this input must reference it`);
        }
      }
      signatureBlocks.push(i);
    } else {
      const r = block.reference;
      const target = blocks[r];
      if (!(r < i) || target === undefined || target.type !== 0) {
        return fail("INVALID_REFERENCE", `unlockBlocks[${i}].reference`, i, `reference ${r} does not point back at a signature unlock block`);
      }
      if (!equalBytes(addresses[r]!, addresses[i]!)) {
        return fail("ADDRESS_MISMATCH", `unlockBlocks[${i}].reference`, i, `input ${i} spends another address than the input ${r} it references`);
      }
    }
  }
  // The expensive part last, and only once the cheap checks pass.
  const hash = essenceHash(payload.essence);
  for (const i of signatureBlocks) {
    const { publicKey, signature } = (blocks[i] as Extract<UnlockBlock, { type: 0 }>).signature;
    if (!verifyEd25519(publicKey, hash, signature)) {
      return fail("INVALID_SIGNATURE", `unlockBlocks[${i}].signature.signature`, i, "the signature does not verify over the essence hash");
    }
  }
  return { valid: true };
}

/** verifyTransactionSignatures that throws the failure as a ProtocolError (path prefixed by `basePath`, e.g. "payload"). */
export function assertTransactionSignatures(payload: TransactionPayload, addressOf: (input: UtxoInput, index: number) => Uint8Array | undefined, basePath = ""): void {
  const result = verifyTransactionSignatures(payload, addressOf);
  if (!result.valid) throw new ProtocolError(result.code, result.message, { path: basePath === "" ? result.path : `${basePath}.${result.path}` });
}
