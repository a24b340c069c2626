/**
 * Ed25519 for everything reach-wasm signs (pack signatures, run and step proofs; seed 003 §5.4, §8.3): signing,
 * and verification that follows RFC 8032 §5.1.7 strictly. Web-standard only (@noble/ed25519 with the synchronous
 * SHA-512 of @noble/hashes).
 *
 * A signature is accepted only when all of these hold, so that a signature reach-wasm accepts is accepted by every
 * strict verifier and a signer cannot produce two encodings of "the same" signature:
 * - the signature is exactly 64 bytes and the public key exactly 32 bytes (no truncation, no trailing garbage);
 * - `S < L` (the group order), RFC 8032 §5.1.7 step 1 and §8.4 (no malleability);
 * - `R` and `A` are canonical point encodings: `y < p`, and not the `x = 0` / sign-bit-1 form (§5.1.3);
 * - `A` is not of small order (libsodium's and Wycheproof's expectation: a small-order key lets one signature
 *   verify for many messages);
 * - the cofactored equation `[8][S]B = [8]R + [8][k]A` holds (§5.1.7 step 3).
 *
 * These are @noble/ed25519 v3's `{ zip215: false }` rules; the length, `S` and key checks are repeated here so
 * that a change of the library's defaults cannot loosen them. The Wycheproof vectors under
 * `conformance/vectors/wycheproof/` pin the behaviour (`verify.test.ts`).
 * @module
 */
import * as ed from "@noble/ed25519";
import { sha512 } from "@noble/hashes/sha2.js";

/** The library, its SHA-512 set on first use (not at import: a run that checks no signature need not load it). */
function edLib(): typeof ed {
  if (ed.hashes.sha512 === undefined) ed.hashes.sha512 = sha512;
  return ed;
}

/** Length of an Ed25519 signature in bytes. */
export const SIGNATURE_LENGTH = 64;
/** Length of an Ed25519 public key in bytes. */
export const PUBLIC_KEY_LENGTH = 32;
/** Length of an Ed25519 private key (the RFC 8032 secret seed) in bytes. */
export const PRIVATE_KEY_LENGTH = 32;

/** The order of the Ed25519 base point, L = 2^252 + 27742317777372353535851937790883648493. */
const L = (1n << 252n) + 27742317777372353535851937790883648493n;

function assertBytes(value: unknown, name: string, length?: number): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw new TypeError(`"${name}" expected Uint8Array, got ${value === null ? "null" : typeof value}`);
  }
  if (length !== undefined && value.length !== length) {
    throw new RangeError(`"${name}" expected Uint8Array of length ${length}, got length=${value.length}`);
  }
}

/**
 * Derive the public key of a private key (the 32-byte RFC 8032 seed).
 * @param privateKey 32-byte seed
 * @returns the 32-byte public key
 * @throws TypeError / RangeError when `privateKey` is not 32 bytes
 * @example bytesToHex(publicKeyFromPrivateKey(new Uint8Array(32))) // "3b6a27bc…da29"
 */
export function publicKeyFromPrivateKey(privateKey: Uint8Array): Uint8Array {
  assertBytes(privateKey, "privateKey", PRIVATE_KEY_LENGTH);
  return edLib().getPublicKey(privateKey);
}

/**
 * Sign a message (RFC 8032 §5.1.6; deterministic: the same key and message give the same signature).
 * @param message the bytes to sign
 * @param privateKey 32-byte seed
 * @returns the 64-byte signature
 * @throws TypeError / RangeError when an argument is not bytes of the right length
 * @example const sig = signEd25519(utf8("hello"), privateKey); // 64 bytes
 */
export function signEd25519(message: Uint8Array, privateKey: Uint8Array): Uint8Array {
  assertBytes(message, "message");
  assertBytes(privateKey, "privateKey", PRIVATE_KEY_LENGTH);
  return edLib().sign(message, privateKey);
}

/**
 * Why a public key cannot be used, or `undefined` when it can: wrong length, not a canonical point encoding,
 * not on the curve, or of small order.
 * @param publicKey candidate public key bytes
 * @returns a short reason ("is of small order"), or undefined for a usable key
 * @throws TypeError when `publicKey` is not a Uint8Array
 * @example publicKeyProblem(new Uint8Array(32)) // "is not a valid curve point …"
 */
export function publicKeyProblem(publicKey: Uint8Array): string | undefined {
  assertBytes(publicKey, "publicKey");
  if (publicKey.length !== PUBLIC_KEY_LENGTH) return `has ${publicKey.length} bytes, expected ${PUBLIC_KEY_LENGTH}`;
  let point: ed.Point;
  try {
    point = edLib().Point.fromBytes(publicKey, false);
  } catch {
    return "is not a valid curve point in canonical encoding (RFC 8032 §5.1.3)";
  }
  if (point.isSmallOrder()) return "is of small order (a weak key that verifies forged signatures)";
  return undefined;
}

/**
 * True when `publicKey` is a usable Ed25519 public key (see {@link publicKeyProblem}).
 * @param publicKey candidate public key bytes
 * @returns whether the key is 32 bytes, canonical, on the curve and not of small order
 * @throws TypeError when `publicKey` is not a Uint8Array
 * @example isValidPublicKey(publicKeyFromPrivateKey(seed)) // true
 */
export function isValidPublicKey(publicKey: Uint8Array): boolean {
  return publicKeyProblem(publicKey) === undefined;
}

/**
 * Verify an Ed25519 signature strictly (RFC 8032 §5.1.7; the rules are listed in the module notes).
 * Never throws for bad signature or key bytes: any malformed, non-canonical or weak input is simply `false`.
 * @param signature the signature bytes (must be exactly 64 bytes to verify)
 * @param message the signed bytes
 * @param publicKey the public key bytes (must be exactly 32 bytes to verify)
 * @returns true only for a valid signature by `publicKey` over `message`
 * @throws TypeError when an argument is not a Uint8Array
 * @example verifyEd25519(signEd25519(msg, sk), msg, publicKeyFromPrivateKey(sk)) // true
 */
export function verifyEd25519(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  assertBytes(signature, "signature");
  assertBytes(message, "message");
  assertBytes(publicKey, "publicKey");
  if (signature.length !== SIGNATURE_LENGTH || publicKey.length !== PUBLIC_KEY_LENGTH) return false;
  let s = 0n;
  for (let i = SIGNATURE_LENGTH - 1; i >= 32; i--) s = (s << 8n) | BigInt(signature[i]!);
  if (s >= L) return false;
  if (publicKeyProblem(publicKey) !== undefined) return false;
  try {
    return edLib().verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}
