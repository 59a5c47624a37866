// Small byte helpers shared by every layer: comparison, equality, concatenation.

/** Unsigned lexicographic order: negative when a < b. A shorter prefix sorts first. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/** Whether two byte arrays hold the same bytes (not in constant time: constantTimeEqual is for secrets). */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Equality whose running time depends only on the lengths, for secrets. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/**
 * A copy of `bytes` (from `start` to `end`) in a new plain Uint8Array. Not `bytes.slice()`: on a Node Buffer (a
 * Uint8Array callers may pass anywhere one is taken) slice() is a view of the same memory, so a "copy" that is then
 * zeroed, masked or kept would touch or alias the caller's bytes.
 */
export function copyBytes(bytes: Uint8Array, start = 0, end = bytes.length): Uint8Array {
  const out = new Uint8Array(end - start);
  out.set(bytes.subarray(start, end));
  return out;
}

/** Joins `parts` into one new array (an array argument, not a spread: a body may arrive in very many chunks). */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const p of parts) size += p.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// One of each, shared: neither keeps state between calls (no { stream: true }), and making them per call cost about a
// microsecond each time a JWT or a nonce was read.
const encoder = new TextEncoder();
const strictDecoder = new TextDecoder("utf-8", { fatal: true });

export const utf8 = {
  encode: (text: string): Uint8Array => encoder.encode(text),
  decode: (bytes: Uint8Array): string => strictDecoder.decode(bytes),
};

/**
 * A byte stream read whole, up to `limit` bytes: undefined (and the stream cancelled) as soon as more arrive, so an
 * oversized body is never buffered whole. A body that declares no length (chunked) is counted as it flows.
 */
export async function readAtMost(stream: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array | undefined> {
  if (stream === null) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0]! : concatBytes(chunks);
}
