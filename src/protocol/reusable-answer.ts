// An answer handed out again and again (a remembered page's) carries its own encodings, so each is made once.
// They live on the answer itself rather than in a WeakMap: a WeakMap's entries survive young-generation
// collections, which under load let the heap grow by hundreds of megabytes before a full collection.
const ENCODINGS = Symbol("encodings");

interface WithEncodings {
  [ENCODINGS]?: Map<string, Buffer>;
}

/** Marks an answer as reusable (and freezes it: nobody may change an answer that others are handed too). */
export function reusable<T extends object>(answer: T): Readonly<T> {
  Object.defineProperty(answer, ENCODINGS, { value: new Map<string, Buffer>() });
  return Object.freeze(answer);
}

/**
 * The answer's encoding of this kind: remembered on a reusable answer (as bytes, written as they are, outside the
 * JavaScript heap), made afresh for any other.
 */
export function encodeOnce(answer: object, kind: string, encode: () => string): string | Buffer {
  const memo = (answer as WithEncodings)[ENCODINGS];
  if (!memo) return encode();
  let bytes = memo.get(kind);
  if (bytes === undefined) {
    bytes = Buffer.from(encode());
    memo.set(kind, bytes);
  }
  return bytes;
}
