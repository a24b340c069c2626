/**
 * SHA-256 with a pluggable backend. The portable backend is @noble/hashes; `src/platform/` installs
 * the runtime's native synchronous implementation (node:crypto on Node and Deno) when it is loaded.
 * Both backends must give identical digests (tested in `sha256.test.ts`).
 * @module
 */
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, describe } from "./hex.ts";

/** A synchronous SHA-256 implementation: bytes in, 32-byte digest out. */
export type Sha256Backend = {
  /** Human-readable name, reported by benchmarks and `conformance --json`. */
  readonly name: string;
  /** Digest of `data`. Must not retain or mutate `data`. */
  digest(data: Uint8Array): Uint8Array;
  /**
   * Optional fast path: lowercase hex digest of bytes or of a string's UTF-8 encoding. Backends that can hash
   * text without a separate encoding pass (node:crypto) provide it; it must agree with `digest`.
   */
  hex?(data: Uint8Array | string): string;
};

/** The portable backend (@noble/hashes). Always available. */
export const nobleBackend: Sha256Backend = {
  name: "@noble/hashes",
  digest: (data) => nobleSha256(data),
};

let backend: Sha256Backend = nobleBackend;

/**
 * Install the SHA-256 backend used by `sha256` and `sha256Hex` (normally called by `src/platform/`).
 * @param next the backend; it is checked against a known answer before it is installed
 * @throws TypeError when the backend gives a wrong digest for "abc"
 * @example setSha256Backend(nobleBackend)
 */
export function setSha256Backend(next: Sha256Backend): void {
  const abc = bytesToHex(next.digest(new Uint8Array([0x61, 0x62, 0x63])));
  const expected = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  if (abc !== expected || (next.hex !== undefined && (next.hex("abc") !== expected || next.hex(utf8("abc")) !== expected))) {
    throw new TypeError(`SHA-256 backend "${next.name}" failed its known-answer test`);
  }
  backend = next;
}

/** The backend currently in use. */
export function getSha256Backend(): Sha256Backend {
  return backend;
}

const encoder = new TextEncoder();

/** UTF-8 encode a string (strings with lone surrogates are refused by `canonicalize`, not here). */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * SHA-256 digest of bytes, or of the UTF-8 encoding of a string.
 * @param data bytes or text
 * @returns the 32-byte digest
 * @throws TypeError when `data` is neither a string nor a Uint8Array
 * @example sha256("abc").length // 32
 */
export function sha256(data: Uint8Array | string): Uint8Array {
  if (typeof data === "string") return backend.digest(encoder.encode(data));
  if (data instanceof Uint8Array) return backend.digest(data);
  throw new TypeError(`"data" expected Uint8Array or string, got ${describe(data)}`);
}

/**
 * Lowercase hex SHA-256 of bytes, or of the UTF-8 encoding of a string.
 * @param data bytes or text
 * @returns 64 lowercase hex digits
 * @throws TypeError when `data` is neither a string nor a Uint8Array
 * @example sha256Hex("abc") // "ba7816bf…15ad"
 */
export function sha256Hex(data: Uint8Array | string): string {
  if (backend.hex !== undefined && (typeof data === "string" || data instanceof Uint8Array)) return backend.hex(data);
  return bytesToHex(sha256(data));
}
