/**
 * Salted value commitments (conformance/HASHING.md "Value commitments"): a step's arguments and its output are each
 * committed as `SHA256("reach-wasm/value/v1\0" + salt + "\0" + JCS(value))` with a 128-bit salt, so a capsule can
 * drop a value and keep its commitment, and a short value cannot be found from the commitment by trying candidates
 * without the salt. Salts are deterministic (two runs of the same request give the same run hash):
 * `salt = HMAC-SHA256(commitKey, "reach-wasm/salt/v1\0" + path)[0..16]` as hex, `commitKey = HMAC-SHA256(utf8(seed),
 * "reach-wasm/commit-key/v1")`; each salt is stored beside its value and goes when the value is redacted.
 * @module
 */
import { canonicalize } from "./jcs.ts";
import { bytesToHex } from "./hex.ts";
import { sha256, sha256Hex, utf8 } from "./sha256.ts";

const BLOCK = 64;

/**
 * HMAC-SHA256 (RFC 2104) over the project's SHA-256.
 * @param key the key bytes
 * @param message the message
 * @returns the 32-byte MAC
 * @example bytesToHex(hmacSha256(utf8("key"), utf8("The quick brown fox jumps over the lazy dog"))) // "f7bc83f4…"
 */
export function hmacSha256(key: Uint8Array, message: Uint8Array): Uint8Array {
  const k = new Uint8Array(BLOCK);
  k.set(key.length > BLOCK ? sha256(key) : key);
  const inner = new Uint8Array(BLOCK + message.length);
  const outer = new Uint8Array(BLOCK + 32);
  for (let i = 0; i < BLOCK; i++) {
    inner[i] = k[i]! ^ 0x36;
    outer[i] = k[i]! ^ 0x5c;
  }
  inner.set(message, BLOCK);
  outer.set(sha256(inner), BLOCK);
  return sha256(outer);
}

/**
 * The key a run's salts come from.
 * @param seed the run's seed (decimal text)
 * @returns the commit key
 */
export function commitKey(seed: string): Uint8Array {
  return hmacSha256(utf8(seed), utf8("reach-wasm/commit-key/v1"));
}

/**
 * The salt of one committed value.
 * @param key the run's commit key ({@link commitKey})
 * @param path the value's logical path (`invocation/<invocationId>/arguments`, `…/output`)
 * @returns 32 hex digits
 * @example valueSalt(commitKey("1"), "invocation/x/output").length // 32
 */
export function valueSalt(key: Uint8Array, path: string): string {
  return bytesToHex(hmacSha256(key, utf8(`reach-wasm/salt/v1\0${path}`)).subarray(0, 16));
}

/**
 * The commitment to a value.
 * @param salt its salt (32 hex digits)
 * @param value a JSON value
 * @returns 64 hex digits
 */
export function valueCommit(salt: string, value: unknown): string {
  return sha256Hex(`reach-wasm/value/v1\0${salt}\0${canonicalize(value)}`);
}

/** The value-commitment scheme a run's request names (`request.json` `commitments`). */
export const SALTED_COMMITMENTS = "salted-v1";
