/**
 * The hash rules of seed 003 §3.3, exactly as `ARCHITECTURE.md` "Hashing" and `conformance/HASHING.md` state them:
 *
 * - `payloadHash = hex(SHA256(JCS(payload)))`
 * - `eventHash   = hex(SHA256(utf8(type + timestamp + payloadHash + prevEventHash)))`, first `prevEventHash` = 64 zeros
 * - `runHash     = hex(SHA256(utf8(eventHash₁ + … + eventHashₙ)))`
 * @module
 */
import { canonicalize } from "../canonical/mod.ts";
import { sha256Hex } from "../canonical/mod.ts";

/** `prevEventHash` of the first event: 64 zeros. */
export const GENESIS_HASH = "0".repeat(64);

/**
 * Hash of a payload: SHA-256 of its RFC 8785 canonical form, lowercase hex.
 * @param payload a JSON value (refused with TypeError if JCS cannot represent it)
 * @returns 64 lowercase hex digits
 * @throws TypeError when the payload is not representable in JCS
 * @example payloadHash({}) // "44136fa3…" (SHA-256 of "{}")
 */
export function payloadHash(payload: unknown): string {
  return sha256Hex(canonicalize(payload));
}

/**
 * Hash of one event, chained to the previous one.
 * @param type event type, e.g. "run.started"
 * @param timestamp ISO 8601 UTC with milliseconds
 * @param payloadHashHex the event's payloadHash
 * @param prevEventHash the previous event's eventHash, or GENESIS_HASH
 * @returns 64 lowercase hex digits
 * @example eventHash("run.started", "1970-01-01T00:00:00.000Z", payloadHash({}), GENESIS_HASH)
 */
export function eventHash(type: string, timestamp: string, payloadHashHex: string, prevEventHash: string): string {
  return sha256Hex(type + timestamp + payloadHashHex + prevEventHash);
}

/**
 * Hash of a whole run: SHA-256 over the concatenated hex event hashes, in order.
 * @param eventHashes every eventHash of the run, first to last
 * @returns 64 lowercase hex digits (for an empty run: SHA-256 of the empty string)
 * @example runHash([]) // "e3b0c442…b855"
 */
export function runHash(eventHashes: readonly string[]): string {
  return sha256Hex(eventHashes.join(""));
}
