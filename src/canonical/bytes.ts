/**
 * Byte helpers every room uses.
 * @module
 */

/**
 * Join byte chunks into one new array.
 * @param parts the chunks (byte arrays, or plain arrays of byte values), in order
 * @param size their total length, when the caller has counted it (default: summed here)
 * @returns a new array holding the chunks one after another
 * @example concatBytes([new Uint8Array([1]), new Uint8Array([2, 3])]) // Uint8Array [1, 2, 3]
 */
export function concatBytes(parts: readonly ArrayLike<number>[], size = parts.reduce((n, p) => n + p.length, 0)): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
